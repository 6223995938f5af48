#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <png.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "labkit/png.h"
#include "labkit/testing.h"

TestSuite(png, .init = lk_tmpdir_make, .fini = lk_tmpdir_remove);

/* Every test writes into its own fresh folder, removed afterwards even when it fails. */


/* A decoded image, RGB 8 bits per channel. */
typedef struct image {
    int w, h;
    uint8_t *px;
} image;

static image read_png(const char *path)
{
    png_image im;
    memset(&im, 0, sizeof im);
    im.version = PNG_IMAGE_VERSION;
    cr_assert(png_image_begin_read_from_file(&im, path), "%s is not a readable PNG: %s", path,
              im.message);
    im.format = PNG_FORMAT_RGB;
    image out = {(int)im.width, (int)im.height, malloc(PNG_IMAGE_SIZE(im))};
    cr_assert_not_null(out.px);
    cr_assert(png_image_finish_read(&im, NULL, out.px, 0, NULL), "%s: %s", path, im.message);
    return out;
}

static const uint8_t *px(const image *im, int x, int y)
{
    cr_assert(x >= 0 && y >= 0 && x < im->w && y < im->h, "pixel (%d, %d) outside %d x %d", x,
              y, im->w, im->h);
    return im->px + ((size_t)y * im->w + x) * 3;
}

/* The pixel at the centre of grid cell (r, c). */
static const uint8_t *cell_px(const image *im, const lk_png_geometry *g, int r, int c)
{
    int x = g->map_x + (c / g->block) * g->cell_w + g->cell_w / 2;
    int y = g->map_y + (r / g->block) * g->cell_h + g->cell_h / 2;
    return px(im, x, y);
}

static int is_grey(const uint8_t *p) { return p[0] == p[1] && p[1] == p[2]; }

/* The yellow end of the colour map (after blending with the shading). */
static int bright_end(const uint8_t *p) { return p[0] > 150 && p[1] > 150 && p[2] < 120; }

static int magenta(const uint8_t *p) { return p[0] == 255 && p[1] == 0 && p[2] == 255; }

#define RGB(p) (p)[0], (p)[1], (p)[2]

static void layout_of(int rows, int cols, lk_png_geometry *g)
{
    lk_error err;
    LK_ASSERT_OK(lk_png_layout(rows, cols, g, &err), &err);
}

/* Read @p path and check it has the size lk_png_layout() promises. */
static image read_checked(const char *path, const lk_png_geometry *g)
{
    image im = read_png(path);
    cr_assert_eq(im.w, g->width);
    cr_assert_eq(im.h, g->height);
    return im;
}

/* Count pixels of exactly this colour in a rectangle. */
static int count_colour(const image *im, int x0, int y0, int w, int h, uint8_t r, uint8_t g,
                        uint8_t b)
{
    int n = 0;
    for (int y = y0; y < y0 + h && y < im->h; y++)
        for (int x = x0; x < x0 + w && x < im->w; x++) {
            const uint8_t *p = im->px + ((size_t)y * im->w + x) * 3;
            n += p[0] == r && p[1] == g && p[2] == b;
        }
    return n;
}

/* A valley descending southwards with a debris blob: 200 x 300 cells of 10 m. */
enum { VR = 200, VC = 300, BLOB_R = 50, BLOB_C = 150 };

static void valley(double *z, double *h)
{
    for (int i = 0; i < VR; i++)
        for (int j = 0; j < VC; j++) {
            double d = j - VC / 2.0;
            z[i * VC + j] = 900.0 - 2.0 * i + 0.02 * d * d + 5.0 * sin(j / 7.0) * cos(i / 9.0);
            double r = hypot(i - BLOB_R, j - BLOB_C);
            h[i * VC + j] = r < 20 ? 12.0 * (1.0 - r / 20.0) + 0.01 : 0.0;
        }
}

Test(png, layout_scales_any_grid_to_a_viewable_map)
{
    lk_png_geometry g;
    layout_of(4, 4, &g);
    cr_assert_eq(g.block, 1);
    cr_assert_eq(g.cell_w, 150);
    cr_assert_eq(g.cell_h, 150);
    cr_assert_eq(g.map_w, 600);
    cr_assert_eq(g.map_h, 600);
    layout_of(VR, VC, &g);
    cr_assert_eq(g.block, 1);
    cr_assert_eq(g.cell_w, 2);
    cr_assert_eq(g.map_w, 600);
    cr_assert_eq(g.map_h, 400);
    layout_of(16384, 16384, &g);
    cr_assert_eq(g.block, 14);
    cr_assert_eq(g.map_w, 1171);
    cr_assert_eq(g.cell_w, 1);
    layout_of(1, 700, &g); /* a strip is stretched across to stay visible */
    cr_assert_eq(g.map_w, 700);
    cr_assert_geq(g.map_h, 32);
    layout_of(1000000, 1, &g);
    cr_assert_eq(g.block, 834);
    cr_assert_geq(g.map_w, 32);
    cr_assert_leq(g.map_h, 1200);

    int sizes[] = {1,   2,    3,    7,    97,   131,  496,  599,
                   600, 610, 1199, 1200, 1201, 2401, 9999, 16384};
    int n = (int)(sizeof sizes / sizeof sizes[0]);
    for (int a = 0; a < n; a++)
        for (int b = 0; b < n; b++) {
            layout_of(sizes[a], sizes[b], &g);
            int lng = g.map_w > g.map_h ? g.map_w : g.map_h;
            cr_assert(lng >= 512 && lng <= 1200, "%d x %d: map %d x %d", sizes[a], sizes[b],
                      g.map_w, g.map_h);
            cr_assert_geq(g.map_w, 32);
            cr_assert_geq(g.map_h, 32);
            /* every cell is inside the map, and the map inside the image */
            cr_assert_eq(g.map_w, (sizes[b] + g.block - 1) / g.block * g.cell_w);
            cr_assert_eq(g.map_h, (sizes[a] + g.block - 1) / g.block * g.cell_h);
            cr_assert_leq(g.map_x + g.map_w, g.width);
            cr_assert_leq(g.map_y + g.map_h, g.height);
        }

    lk_error err;
    cr_assert_eq(lk_png_layout(0, 5, &g, &err), -1);
    cr_assert(strstr(err.msg, "0 x 5"), "%s", err.msg);
}

Test(png, terrain_colours_wet_cells_and_leaves_dry_ones_grey)
{
    double *z = malloc(VR * VC * sizeof *z), *h = malloc(VR * VC * sizeof *h);
    valley(z, h);
    lk_error err;
    const char *path = lk_tmp_path("valley.png");
    LK_ASSERT_OK(lk_png_terrain(path, z, h, VR, VC, 10.0, 0.001, "valley: thickness h", &err),
                 &err);
    lk_png_geometry g;
    layout_of(VR, VC, &g);
    image im = read_checked(path, &g);

    /* Blob centre: the largest h, the bright (yellow) end of the colour map. */
    const uint8_t *p = cell_px(&im, &g, BLOB_R, BLOB_C);
    cr_assert_not(is_grey(p));
    cr_assert(bright_end(p), "max h drawn as %d,%d,%d", RGB(p));
    /* The smallest h: the dark (purple) end. */
    int kmin = -1;
    for (int k = 0; k < VR * VC; k++)
        if (h[k] > 0.001 && (kmin < 0 || h[k] < h[kmin]))
            kmin = k;
    p = cell_px(&im, &g, kmin / VC, kmin % VC);
    cr_assert_not(is_grey(p));
    cr_assert(p[2] > p[1] && p[0] > p[1], "min h drawn as %d,%d,%d", RGB(p));
    /* Dry cells: grey, shaded (not all the same grey). */
    int greys[256] = {0}, ndistinct = 0;
    for (int i = 0; i < VR; i += 7)
        for (int j = 0; j < VC; j += 7) {
            if (h[i * VC + j] > 0.001)
                continue;
            p = cell_px(&im, &g, i, j);
            cr_assert(is_grey(p), "dry cell (%d, %d) drawn as %d,%d,%d", i, j, RGB(p));
            ndistinct += !greys[p[0]]++;
        }
    cr_assert_gt(ndistinct, 10, "hillshade gives only %d grey levels", ndistinct);

    /* Title and legend labels are drawn in ink; the legend bar holds the colour map. */
    cr_assert_gt(count_colour(&im, 0, 0, im.w, g.map_y, 32, 32, 32), 100);
    int lx = g.map_x + g.map_w + 16;
    cr_assert_gt(count_colour(&im, lx + 30, g.map_y, im.w - lx - 30, g.map_h, 32, 32, 32), 100);
    const uint8_t *top = px(&im, lx + 12, g.map_y + 40);
    const uint8_t *bottom = px(&im, lx + 12, g.height - 120);
    cr_assert(top[1] > 200 && top[2] < 100, "bar top %d,%d,%d", RGB(top));
    cr_assert(bottom[2] > bottom[1], "bar bottom %d,%d,%d", RGB(bottom));
    free(im.px);
    free(z);
    free(h);
}

Test(png, terrain_downsampling_keeps_a_one_cell_flow_visible)
{
    enum { R = 2600, C = 1300, COL = 777 };
    double *z = malloc((size_t)R * C * sizeof *z), *h = calloc((size_t)R * C, sizeof *h);
    cr_assert(z && h);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            z[(size_t)i * C + j] = 1000.0 - 0.3 * i + 10.0 * sin(j / 40.0);
    for (int i = 100; i < 2000; i++)
        h[(size_t)i * C + COL] = 0.002;
    h[(size_t)1000 * C + COL] = 5.0;
    lk_error err;
    const char *path = lk_tmp_path("big.png");
    LK_ASSERT_OK(lk_png_terrain(path, z, h, R, C, 5.0, 0.001, "big", &err), &err);
    lk_png_geometry g;
    layout_of(R, C, &g);
    cr_assert_eq(g.block, 3);
    image im = read_checked(path, &g);
    cr_assert_not(is_grey(cell_px(&im, &g, 500, COL)));
    /* The block holding the 5 m cell shows its max (the bright end), not a mean. */
    const uint8_t *p = cell_px(&im, &g, 1000, COL);
    cr_assert(bright_end(p), "max h drawn as %d,%d,%d", RGB(p));
    cr_assert_not(is_grey(cell_px(&im, &g, 1999, COL)));
    cr_assert(is_grey(cell_px(&im, &g, 500, COL + 3)));
    cr_assert(is_grey(cell_px(&im, &g, 2100, COL)));
    free(im.px);
    free(z);
    free(h);
}

Test(png, hillshade_lights_north_west_faces)
{
    /* A pyramid: each face has the same altitudes, only its orientation differs. */
    enum { N = 61 };
    double z[N * N], h[N * N];
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            z[i * N + j] = 100.0 - 2.0 * (abs(i - N / 2) + abs(j - N / 2));
            h[i * N + j] = 0.0;
        }
    lk_error err;
    const char *path = lk_tmp_path("pyramid.png");
    LK_ASSERT_OK(lk_png_terrain(path, z, h, N, N, 2.0, 0.001, "pyramid", &err), &err);
    lk_png_geometry g;
    layout_of(N, N, &g);
    image im = read_checked(path, &g);
    int q = N / 4, f = N - 1 - N / 4;
    int nw = cell_px(&im, &g, q, q)[0], ne = cell_px(&im, &g, q, f)[0];
    int sw = cell_px(&im, &g, f, q)[0], se = cell_px(&im, &g, f, f)[0];
    cr_assert(nw > ne && ne > se, "NW %d, NE %d, SE %d", nw, ne, se);
    cr_assert(abs(ne - sw) <= 1, "NE %d, SW %d", ne, sw);
    cr_assert_gt(nw - se, 100, "too little contrast: NW %d, SE %d", nw, se);
    free(im.px);
}

Test(png, terrain_marks_nan_thickness_magenta)
{
    double *z = malloc(VR * VC * sizeof *z), *h = malloc(VR * VC * sizeof *h);
    valley(z, h);
    h[120 * VC + 30] = NAN;
    lk_poison(&h[10 * VC + 250], 1);
    lk_error err;
    const char *path = lk_tmp_path("nan.png");
    LK_ASSERT_OK(lk_png_terrain(path, z, h, VR, VC, 10.0, 0.001, NULL, &err), &err);
    lk_png_geometry g;
    layout_of(VR, VC, &g);
    image im = read_checked(path, &g);
    const uint8_t *p = cell_px(&im, &g, 120, 30);
    cr_assert(magenta(p), "NaN cell %d,%d,%d", RGB(p));
    p = cell_px(&im, &g, 10, 250);
    cr_assert(magenta(p), "poison cell %d,%d,%d", RGB(p));
    /* The colour scale ignores the NaN: the blob centre is still the bright end. */
    p = cell_px(&im, &g, BLOB_R, BLOB_C);
    cr_assert(bright_end(p), "max h drawn as %d,%d,%d", RGB(p));
    /* No title: the title band stays white. */
    int band = g.map_y - 2;
    cr_assert_eq(count_colour(&im, 0, 0, im.w, band, 255, 255, 255), im.w * band);
    free(im.px);
    free(z);
    free(h);
}

Test(png, terrain_with_no_wet_cell_is_all_grey)
{
    double z[6] = {1, 2, 3, 4, 5, 6}, h[6] = {0, 0.0005, 0, 0, 0, 0};
    lk_error err;
    const char *path = lk_tmp_path("dry.png");
    LK_ASSERT_OK(lk_png_terrain(path, z, h, 2, 3, 1.0, 0.001, "dry", &err), &err);
    lk_png_geometry g;
    layout_of(2, 3, &g);
    image im = read_checked(path, &g);
    for (int r = 0; r < 2; r++)
        for (int c = 0; c < 3; c++)
            cr_assert(is_grey(cell_px(&im, &g, r, c)), "cell (%d, %d)", r, c);
    free(im.px);
}

Test(png, field_maps_min_to_dark_and_max_to_bright)
{
    enum { R = 50, C = 80 };
    double v[R * C];
    for (int i = 0; i < R; i++)
        for (int j = 0; j < C; j++)
            v[i * C + j] = 1.0 + 0.01 * j;
    v[25 * C + 40] = NAN;
    lk_error err;
    const char *path = lk_tmp_path("field.png");
    LK_ASSERT_OK(lk_png_field(path, v, R, C, "water height", &err), &err);
    lk_png_geometry g;
    layout_of(R, C, &g);
    image im = read_checked(path, &g);
    const uint8_t *lo = cell_px(&im, &g, 10, 0), *hi = cell_px(&im, &g, 10, C - 1);
    cr_assert(lo[0] == 68 && lo[1] == 1 && lo[2] == 84, "min %d,%d,%d", RGB(lo));
    cr_assert(hi[0] == 253 && hi[1] == 231 && hi[2] == 37, "max %d,%d,%d", RGB(hi));
    const uint8_t *nan = cell_px(&im, &g, 25, 40);
    cr_assert(magenta(nan), "NaN %d,%d,%d", RGB(nan));
    free(im.px);

    /* A constant field is one colour, not a stretched map of nothing. */
    for (int k = 0; k < R * C; k++)
        v[k] = 2.5;
    LK_ASSERT_OK(lk_png_field(path, v, R, C, "constant", &err), &err);
    im = read_checked(path, &g);
    const uint8_t *a = cell_px(&im, &g, 0, 0), *b = cell_px(&im, &g, R - 1, C - 1);
    cr_assert(memcmp(a, b, 3) == 0 && !is_grey(a));
    free(im.px);
}

Test(png, diff_is_red_exactly_where_cells_differ)
{
    double e[16], got[16];
    for (int k = 0; k < 16; k++)
        e[k] = got[k] = k * 0.5;
    got[1 * 4 + 2] += 1e-15;
    lk_error err;
    const char *path = lk_tmp_path("diff.png");
    LK_ASSERT_OK(lk_png_diff(path, e, got, 4, 4, &err), &err);
    lk_png_geometry g;
    layout_of(4, 4, &g);
    cr_assert_eq(g.cell_w, 150);
    image im = read_checked(path, &g);
    for (int r = 0; r < 4; r++)
        for (int c = 0; c < 4; c++) {
            const uint8_t *p = cell_px(&im, &g, r, c);
            if (r == 1 && c == 2)
                cr_assert(p[0] > 150 && p[1] < 50 && p[2] < 50, "differing cell %d,%d,%d",
                          RGB(p));
            else
                cr_assert(is_grey(p) && p[0] > 150, "equal cell (%d, %d): %d,%d,%d", r, c,
                          RGB(p));
        }
    free(im.px);

    /* NaN and the poison are magenta; -0.0 against 0.0 differs. */
    lk_poison(&got[0], 1);
    got[15] = NAN;
    e[5] = 0.0;
    got[5] = -0.0;
    LK_ASSERT_OK(lk_png_diff(path, e, got, 4, 4, &err), &err);
    im = read_checked(path, &g);
    const uint8_t *p0 = cell_px(&im, &g, 0, 0), *p15 = cell_px(&im, &g, 3, 3);
    cr_assert(magenta(p0), "poison %d,%d,%d", RGB(p0));
    cr_assert(magenta(p15), "NaN %d,%d,%d", RGB(p15));
    cr_assert_not(is_grey(cell_px(&im, &g, 1, 1)));
    free(im.px);
}

Test(png, strips_and_single_cells_give_valid_images)
{
    enum { N = 700 };
    double z[N], h[N];
    for (int k = 0; k < N; k++) {
        z[k] = 100.0 - 0.1 * k;
        h[k] = k >= 200 && k < 300 ? 0.5 : 0.0;
    }
    lk_error err;
    int shapes[][2] = {{1, N}, {N, 1}, {1, 1}, {2, N / 2}};
    for (int s = 0; s < 4; s++) {
        int r = shapes[s][0], c = shapes[s][1];
        lk_png_geometry g;
        layout_of(r, c, &g);
        const char *path = lk_tmp_path("strip.png");
        LK_ASSERT_OK(lk_png_terrain(path, z, h, r, c, 5.0, 0.001, "strip", &err), &err);
        image im = read_checked(path, &g);
        int k = r * c > 250 ? 250 : 0; /* a wet cell when there is one */
        const uint8_t *p = cell_px(&im, &g, k / c, k % c);
        if (r * c > 250)
            cr_assert_not(is_grey(p), "%d x %d strip: wet cell grey", r, c);
        else
            cr_assert(is_grey(p), "%d x %d: dry cell coloured", r, c);
        free(im.px);
        LK_ASSERT_OK(lk_png_field(path, z, r, c, "strip", &err), &err);
        free(read_checked(path, &g).px);
        LK_ASSERT_OK(lk_png_diff(path, z, h, r, c, &err), &err);
        free(read_checked(path, &g).px);
    }
}

Test(png, bad_arguments_fail_with_a_clear_message)
{
    double v[4] = {1, 2, 3, 4};
    lk_error err;
    const char *path = lk_tmp_path("x.png");
    cr_assert_eq(lk_png_terrain(path, NULL, v, 2, 2, 1.0, 0.001, "t", &err), -1);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "NULL"), "%s", err.msg);
    cr_assert_eq(lk_png_terrain(path, v, NULL, 2, 2, 1.0, 0.001, "t", &err), -1);
    cr_assert(strstr(err.msg, "h (thickness)"), "%s", err.msg);
    cr_assert_eq(lk_png_terrain(path, v, v, 0, 2, 1.0, 0.001, "t", &err), -1);
    cr_assert(strstr(err.msg, path) && strstr(err.msg, "0 x 2"), "%s", err.msg);
    cr_assert_eq(lk_png_terrain(path, v, v, 2, 2, 0.0, 0.001, "t", &err), -1);
    cr_assert(strstr(err.msg, "cellsize"), "%s", err.msg);
    cr_assert_eq(lk_png_field(path, v, 2, -1, "t", &err), -1);
    cr_assert(strstr(err.msg, "2 x -1"), "%s", err.msg);
    cr_assert_eq(lk_png_field(path, NULL, 2, 2, "t", &err), -1);
    cr_assert_eq(lk_png_diff(path, v, NULL, 2, 2, &err), -1);
    cr_assert(strstr(err.msg, "got"), "%s", err.msg);
    cr_assert_eq(lk_png_diff(NULL, v, v, 2, 2, &err), -1);
    cr_assert(strstr(err.msg, "lk_png_diff") && strstr(err.msg, "path"), "%s", err.msg);
    cr_assert_eq(lk_png_terrain("", v, v, 2, 2, 1.0, 0.001, "t", &err), -1);
    cr_assert(strstr(err.msg, "lk_png_terrain: no output path"), "%s", err.msg);
    cr_assert_eq(access(path, F_OK), -1, "a failed call left %s behind", path);
}

Test(png, unwritable_paths_fail_with_path_and_reason)
{
    double v[4] = {1, 2, 3, 4};
    lk_error err;
    char path[512];
    snprintf(path, sizeof path, "%s/no/such/folder/out.png", lk_tmpdir);
    cr_assert_eq(lk_png_field(path, v, 2, 2, "t", &err), -1);
    cr_assert(strstr(err.msg, path), "%s", err.msg);
    cr_assert(strstr(err.msg, strerror(ENOENT)), "%s", err.msg);
    /* A folder is not a file. */
    cr_assert_eq(lk_png_diff(lk_tmpdir, v, v, 2, 2, &err), -1);
    cr_assert(strstr(err.msg, lk_tmpdir) && strstr(err.msg, strerror(EISDIR)), "%s", err.msg);
}

Test(png, write_errors_are_reported_not_crashed)
{
    struct stat st;
    if (stat("/dev/full", &st) != 0)
        cr_skip_test("no /dev/full on this system");
    enum { R = 300, C = 300 };
    static double v[R * C];
    for (int k = 0; k < R * C; k++)
        v[k] = sin(k * 0.37) * cos(k * 0.011); /* noise: the PNG is far larger than a buffer */
    lk_error err;
    cr_assert_eq(lk_png_field("/dev/full", v, R, C, "full", &err), -1);
    cr_assert(strstr(err.msg, "/dev/full") && strstr(err.msg, strerror(ENOSPC)), "%s", err.msg);
    /* A small PNG fits in the stdio buffer: the error shows only when it is flushed. */
    double one[1] = {1.0};
    cr_assert_eq(lk_png_field("/dev/full", one, 1, 1, NULL, &err), -1);
    cr_assert(strstr(err.msg, "/dev/full") && strstr(err.msg, strerror(ENOSPC)), "%s", err.msg);
    cr_assert_eq(stat("/dev/full", &st), 0, "the device must not be removed");
}
