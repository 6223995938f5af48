#include "labkit/png.h"

#include <errno.h>
#include <math.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* 5x7 font (+1 row for descenders) for ASCII 32..126: five columns per glyph, bit 0 is the
   top row, bit 7 the descender row. */
static const uint8_t font5x7[95][5] = {
    {0x00, 0x00, 0x00, 0x00, 0x00}, /* space */
    {0x00, 0x00, 0x5F, 0x00, 0x00}, /* ! */
    {0x00, 0x07, 0x00, 0x07, 0x00}, /* " */
    {0x14, 0x7F, 0x14, 0x7F, 0x14}, /* # */
    {0x24, 0x2A, 0x7F, 0x2A, 0x12}, /* $ */
    {0x23, 0x13, 0x08, 0x64, 0x62}, /* % */
    {0x36, 0x49, 0x55, 0x22, 0x50}, /* & */
    {0x00, 0x05, 0x03, 0x00, 0x00}, /* ' */
    {0x00, 0x1C, 0x22, 0x41, 0x00}, /* ( */
    {0x00, 0x41, 0x22, 0x1C, 0x00}, /* ) */
    {0x08, 0x2A, 0x1C, 0x2A, 0x08}, /* asterisk */
    {0x08, 0x08, 0x3E, 0x08, 0x08}, /* + */
    {0x00, 0x50, 0x30, 0x00, 0x00}, /* , */
    {0x08, 0x08, 0x08, 0x08, 0x08}, /* - */
    {0x00, 0x60, 0x60, 0x00, 0x00}, /* . */
    {0x20, 0x10, 0x08, 0x04, 0x02}, /* slash */
    {0x3E, 0x51, 0x49, 0x45, 0x3E}, /* 0 */
    {0x00, 0x42, 0x7F, 0x40, 0x00}, /* 1 */
    {0x42, 0x61, 0x51, 0x49, 0x46}, /* 2 */
    {0x21, 0x41, 0x45, 0x4B, 0x31}, /* 3 */
    {0x18, 0x14, 0x12, 0x7F, 0x10}, /* 4 */
    {0x27, 0x45, 0x45, 0x45, 0x39}, /* 5 */
    {0x3C, 0x4A, 0x49, 0x49, 0x30}, /* 6 */
    {0x01, 0x71, 0x09, 0x05, 0x03}, /* 7 */
    {0x36, 0x49, 0x49, 0x49, 0x36}, /* 8 */
    {0x06, 0x49, 0x49, 0x29, 0x1E}, /* 9 */
    {0x00, 0x36, 0x36, 0x00, 0x00}, /* : */
    {0x00, 0x56, 0x36, 0x00, 0x00}, /* ; */
    {0x08, 0x14, 0x22, 0x41, 0x00}, /* < */
    {0x14, 0x14, 0x14, 0x14, 0x14}, /* = */
    {0x00, 0x41, 0x22, 0x14, 0x08}, /* > */
    {0x02, 0x01, 0x51, 0x09, 0x06}, /* ? */
    {0x32, 0x49, 0x79, 0x41, 0x3E}, /* @ */
    {0x7E, 0x11, 0x11, 0x11, 0x7E}, /* A */
    {0x7F, 0x49, 0x49, 0x49, 0x36}, /* B */
    {0x3E, 0x41, 0x41, 0x41, 0x22}, /* C */
    {0x7F, 0x41, 0x41, 0x22, 0x1C}, /* D */
    {0x7F, 0x49, 0x49, 0x49, 0x41}, /* E */
    {0x7F, 0x09, 0x09, 0x09, 0x01}, /* F */
    {0x3E, 0x41, 0x49, 0x49, 0x7A}, /* G */
    {0x7F, 0x08, 0x08, 0x08, 0x7F}, /* H */
    {0x00, 0x41, 0x7F, 0x41, 0x00}, /* I */
    {0x20, 0x40, 0x41, 0x3F, 0x01}, /* J */
    {0x7F, 0x08, 0x14, 0x22, 0x41}, /* K */
    {0x7F, 0x40, 0x40, 0x40, 0x40}, /* L */
    {0x7F, 0x02, 0x0C, 0x02, 0x7F}, /* M */
    {0x7F, 0x04, 0x08, 0x10, 0x7F}, /* N */
    {0x3E, 0x41, 0x41, 0x41, 0x3E}, /* O */
    {0x7F, 0x09, 0x09, 0x09, 0x06}, /* P */
    {0x3E, 0x41, 0x51, 0x21, 0x5E}, /* Q */
    {0x7F, 0x09, 0x19, 0x29, 0x46}, /* R */
    {0x46, 0x49, 0x49, 0x49, 0x31}, /* S */
    {0x01, 0x01, 0x7F, 0x01, 0x01}, /* T */
    {0x3F, 0x40, 0x40, 0x40, 0x3F}, /* U */
    {0x1F, 0x20, 0x40, 0x20, 0x1F}, /* V */
    {0x3F, 0x40, 0x38, 0x40, 0x3F}, /* W */
    {0x63, 0x14, 0x08, 0x14, 0x63}, /* X */
    {0x07, 0x08, 0x70, 0x08, 0x07}, /* Y */
    {0x61, 0x51, 0x49, 0x45, 0x43}, /* Z */
    {0x00, 0x7F, 0x41, 0x41, 0x00}, /* [ */
    {0x02, 0x04, 0x08, 0x10, 0x20}, /* backslash */
    {0x00, 0x41, 0x41, 0x7F, 0x00}, /* ] */
    {0x04, 0x02, 0x01, 0x02, 0x04}, /* ^ */
    {0x40, 0x40, 0x40, 0x40, 0x40}, /* _ */
    {0x00, 0x01, 0x02, 0x04, 0x00}, /* ` */
    {0x20, 0x54, 0x54, 0x54, 0x78}, /* a */
    {0x7F, 0x48, 0x44, 0x44, 0x38}, /* b */
    {0x38, 0x44, 0x44, 0x44, 0x20}, /* c */
    {0x38, 0x44, 0x44, 0x48, 0x7F}, /* d */
    {0x38, 0x54, 0x54, 0x54, 0x18}, /* e */
    {0x08, 0x7E, 0x09, 0x01, 0x02}, /* f */
    {0x18, 0xA4, 0xA4, 0xA4, 0x78}, /* g */
    {0x7F, 0x08, 0x04, 0x04, 0x78}, /* h */
    {0x00, 0x44, 0x7D, 0x40, 0x00}, /* i */
    {0x40, 0x80, 0x84, 0x7D, 0x00}, /* j */
    {0x7F, 0x10, 0x28, 0x44, 0x00}, /* k */
    {0x00, 0x41, 0x7F, 0x40, 0x00}, /* l */
    {0x7C, 0x04, 0x18, 0x04, 0x78}, /* m */
    {0x7C, 0x08, 0x04, 0x04, 0x78}, /* n */
    {0x38, 0x44, 0x44, 0x44, 0x38}, /* o */
    {0xFC, 0x24, 0x24, 0x24, 0x18}, /* p */
    {0x18, 0x24, 0x24, 0x24, 0xFC}, /* q */
    {0x7C, 0x08, 0x04, 0x04, 0x08}, /* r */
    {0x48, 0x54, 0x54, 0x54, 0x20}, /* s */
    {0x04, 0x3F, 0x44, 0x40, 0x20}, /* t */
    {0x3C, 0x40, 0x40, 0x20, 0x7C}, /* u */
    {0x1C, 0x20, 0x40, 0x20, 0x1C}, /* v */
    {0x3C, 0x40, 0x30, 0x40, 0x3C}, /* w */
    {0x44, 0x28, 0x10, 0x28, 0x44}, /* x */
    {0x1C, 0xA0, 0xA0, 0xA0, 0x7C}, /* y */
    {0x44, 0x64, 0x54, 0x4C, 0x44}, /* z */
    {0x00, 0x08, 0x36, 0x41, 0x00}, /* { */
    {0x00, 0x00, 0x7F, 0x00, 0x00}, /* | */
    {0x00, 0x41, 0x36, 0x08, 0x00}, /* } */
    {0x08, 0x04, 0x08, 0x10, 0x08}, /* ~ */
};

/* Viridis at 9 even steps: perceptually uniform, readable in grey and by colour-blind eyes. */
static const uint8_t viridis[9][3] = {
    {68, 1, 84},    {71, 44, 122},  {59, 81, 139},   {44, 113, 142}, {33, 144, 141},
    {39, 173, 129}, {92, 200, 99},  {170, 220, 50},  {253, 231, 37},
};

/* Layout in pixels. Every image kind shares it so lk_png_layout() describes them all. */
enum {
    MARGIN = 16,
    TITLE_H = 48,
    LEGEND_W = 224,
    BODY_MIN_H = 320,
    MAP_MIN_LONG = 600,
    MAP_MAX_LONG = 1200,
    MAP_MIN_SHORT = 32,
    IMAGE_MIN_W = 560,
    TEXT_SCALE = 2,
    LINE_H = 9 * TEXT_SCALE,
    BAR_W = 24,
};

typedef struct rgb {
    uint8_t r, g, b;
} rgb;

static const rgb INK = {32, 32, 32}, FRAME = {96, 96, 96}, MAGENTA = {255, 0, 255},
                 RED = {220, 0, 0}, EQUAL_GREY = {214, 214, 214};

typedef struct canvas {
    int w, h;
    uint8_t *px; /* RGB, row-major */
} canvas;

static void put_px(canvas *c, int x, int y, rgb col)
{
    if (x < 0 || y < 0 || x >= c->w || y >= c->h)
        return;
    uint8_t *p = c->px + ((size_t)y * (size_t)c->w + (size_t)x) * 3;
    p[0] = col.r;
    p[1] = col.g;
    p[2] = col.b;
}

static void fill_rect(canvas *c, int x, int y, int w, int h, rgb col)
{
    for (int j = y; j < y + h; j++)
        for (int i = x; i < x + w; i++)
            put_px(c, i, j, col);
}

static void frame_rect(canvas *c, int x, int y, int w, int h, rgb col)
{
    fill_rect(c, x, y, w, 1, col);
    fill_rect(c, x, y + h - 1, w, 1, col);
    fill_rect(c, x, y, 1, h, col);
    fill_rect(c, x + w - 1, y, 1, h, col);
}

static int text_width(const char *s, int scale) { return (int)strlen(s) * 6 * scale; }

/* Draw @p s with its top-left corner at (x, y); anything outside the canvas is clipped. */
static void draw_text(canvas *c, int x, int y, const char *s, int scale, rgb col)
{
    for (; *s; s++, x += 6 * scale) {
        unsigned char ch = (unsigned char)*s;
        const uint8_t *g = font5x7[(ch >= 32 && ch <= 126 ? ch : '?') - 32];
        for (int cx = 0; cx < 5; cx++)
            for (int cy = 0; cy < 8; cy++)
                if (g[cx] >> cy & 1)
                    fill_rect(c, x + cx * scale, y + cy * scale, scale, scale, col);
    }
}

/* Text at the normal size, or at half size where it would run past the image's edge. */
static void draw_fitting_text(canvas *c, int x, int y, const char *s, rgb col)
{
    int scale = text_width(s, TEXT_SCALE) <= c->w - x - 4 ? TEXT_SCALE : 1;
    draw_text(c, x, y + (TEXT_SCALE - scale) * 7 / 2, s, scale, col);
}

/* The title line: shrunk, then cut with "..." when it does not fit the image width. */
static void draw_title(canvas *c, const char *title)
{
    if (!title || !*title)
        return;
    char t[256];
    snprintf(t, sizeof t, "%s", title);
    int avail = c->w - 2 * MARGIN, scale = TEXT_SCALE;
    if (text_width(t, scale) > avail)
        scale = 1;
    size_t maxlen = (size_t)(avail / (6 * scale));
    if (strlen(t) > maxlen && maxlen >= 3)
        memcpy(t + maxlen - 3, "...", 4);
    int y = (TITLE_H - 7 * scale) / 2;
    draw_text(c, MARGIN, y, t, scale, INK);
    if (scale > 1) /* bold: a second pass one pixel to the right */
        draw_text(c, MARGIN + 1, y, t, scale, INK);
}

static rgb colormap(double t)
{
    if (!(t > 0.0))
        t = 0.0;
    if (t > 1.0)
        t = 1.0;
    double x = t * 8.0;
    int i = (int)x;
    if (i > 7)
        i = 7;
    double f = x - i;
    rgb out;
    out.r = (uint8_t)lround(viridis[i][0] + f * (viridis[i + 1][0] - viridis[i][0]));
    out.g = (uint8_t)lround(viridis[i][1] + f * (viridis[i + 1][1] - viridis[i][1]));
    out.b = (uint8_t)lround(viridis[i][2] + f * (viridis[i + 1][2] - viridis[i][2]));
    return out;
}

int lk_png_layout(int rows, int cols, lk_png_geometry *g, lk_error *err)
{
    if (!g)
        return lk_fail(err, "lk_png_layout: no geometry to fill: pass a lk_png_geometry");
    if (rows < 1 || cols < 1)
        return lk_fail(err, "lk_png_layout: a %d x %d grid cannot be drawn: rows and cols "
                            "must be at least 1", rows, cols);
    int lng = rows > cols ? rows : cols;
    int block = lng > MAP_MAX_LONG ? (lng + MAP_MAX_LONG - 1) / MAP_MAX_LONG : 1;
    int rd = (rows + block - 1) / block, cd = (cols + block - 1) / block;
    int dlong = rd > cd ? rd : cd;
    int up = dlong < MAP_MIN_LONG ? (MAP_MIN_LONG + dlong - 1) / dlong : 1;
    int cw = up, ch = up;
    if (rd * ch < MAP_MIN_SHORT)
        ch = (MAP_MIN_SHORT + rd - 1) / rd;
    if (cd * cw < MAP_MIN_SHORT)
        cw = (MAP_MIN_SHORT + cd - 1) / cd;
    g->block = block;
    g->cell_w = cw;
    g->cell_h = ch;
    g->map_w = cd * cw;
    g->map_h = rd * ch;
    g->map_x = MARGIN;
    g->map_y = TITLE_H;
    int body_h = g->map_h > BODY_MIN_H ? g->map_h : BODY_MIN_H;
    int w = MARGIN + g->map_w + MARGIN + LEGEND_W;
    g->width = w > IMAGE_MIN_W ? w : IMAGE_MIN_W;
    g->height = TITLE_H + body_h + MARGIN;
    return 0;
}

/* Everything a picture is drawn on: the layout, its canvas and the reduced grid size. */
typedef struct picture {
    lk_png_geometry geo;
    int rows, cols; /* of the grid */
    int rd, cd;     /* rows and columns of map elements */
    canvas cv;
} picture;

static int picture_init(picture *p, const char *path, int rows, int cols, lk_error *err)
{
    if (lk_png_layout(rows, cols, &p->geo, NULL) != 0)
        return lk_fail(err, "%s: a %d x %d grid cannot be drawn: rows and cols must be at "
                            "least 1", path, rows, cols);
    p->rows = rows;
    p->cols = cols;
    p->rd = (rows + p->geo.block - 1) / p->geo.block;
    p->cd = (cols + p->geo.block - 1) / p->geo.block;
    p->cv.w = p->geo.width;
    p->cv.h = p->geo.height;
    p->cv.px = malloc((size_t)p->cv.w * (size_t)p->cv.h * 3);
    if (!p->cv.px)
        return lk_fail(err, "%s: out of memory for a %d x %d picture", path, p->cv.w, p->cv.h);
    memset(p->cv.px, 255, (size_t)p->cv.w * (size_t)p->cv.h * 3);
    frame_rect(&p->cv, p->geo.map_x - 1, p->geo.map_y - 1, p->geo.map_w + 2,
               p->geo.map_h + 2, FRAME);
    return 0;
}

/* Paint map element (r, c) of the reduced grid. */
static void paint_element(picture *p, int r, int c, rgb col)
{
    fill_rect(&p->cv, p->geo.map_x + c * p->geo.cell_w, p->geo.map_y + r * p->geo.cell_h,
              p->geo.cell_w, p->geo.cell_h, col);
}

static int legend_x(const picture *p) { return p->geo.map_x + p->geo.map_w + MARGIN; }

/* Legend bar geometry: caption above, up to four note lines below. */
static void legend_bar_box(const picture *p, int *y, int *h)
{
    int body_h = p->geo.height - TITLE_H - MARGIN;
    *y = p->geo.map_y + LINE_H + 12;
    *h = body_h - (LINE_H + 12) - (4 * (LINE_H + 4) + 12);
}

/* Top of note line @p line under the legend bar (line 0 is the scale's). */
static int note_y(const picture *p, int line)
{
    int by, bh;
    legend_bar_box(p, &by, &bh);
    return by + bh + 12 + line * (LINE_H + 4);
}

/* A number short enough for the legend (0.001, 12.3, 4567, 1.2e+06) with @p digits
   significant digits at least, more where 3 would print neighbouring labels alike. */
static void format_value(char *s, size_t size, double v, const char *unit, int digits)
{
    double a = fabs(v);
    if (digits <= 3 && a >= 1000.0 && a < 1e6)
        snprintf(s, size, "%.0f%s", v, unit);
    else if (digits <= 3 && a != 0.0 && (a < 1e-3 || a >= 1e6))
        snprintf(s, size, "%.2g%s", v, unit);
    else
        snprintf(s, size, "%.*g%s", digits, v, unit);
}

/*
 * Values spread by less than a millionth of their size are drawn as one colour: stretching
 * the colour map over rounding noise (a film left at exactly the adherence threshold) would
 * paint meaningless bands.
 */
static int nearly_uniform(double lo, double hi)
{
    double m = fabs(lo) > fabs(hi) ? fabs(lo) : fabs(hi);
    return !(hi - lo > 1e-6 * m);
}

/* Map element colour parameter for value v in [lo, hi]. */
static double colour_t(double v, double lo, double hi, int logscale)
{
    if (nearly_uniform(lo, hi))
        return 0.5;
    if (logscale)
        return (log(v) - log(lo)) / (log(hi) - log(lo));
    return (v - lo) / (hi - lo);
}

/*
 * A colour bar from lo (bottom) to hi (top) with three labels; log spaces the colours and
 * the middle label geometrically. Nearly uniform values give one colour and one label.
 */
static void draw_colour_legend(picture *p, const char *caption, double lo, double hi,
                               int logscale, const char *unit)
{
    int x = legend_x(p), by, bh;
    legend_bar_box(p, &by, &bh);
    draw_text(&p->cv, x, p->geo.map_y, caption, TEXT_SCALE, INK);
    int same = nearly_uniform(lo, hi);
    for (int j = 0; j < bh; j++) {
        double t = same ? 0.5 : 1.0 - (double)j / (bh - 1);
        fill_rect(&p->cv, x, by + j, BAR_W, 1, colormap(t));
    }
    frame_rect(&p->cv, x - 1, by - 1, BAR_W + 2, bh + 2, FRAME);
    double mid = logscale ? sqrt(lo * hi) : lo + 0.5 * (hi - lo);
    double vals[3] = {hi, mid, lo};
    int ys[3] = {by, by + bh / 2, by + bh - 1};
    char s[3][40];
    for (int digits = 3; digits <= 9; digits++) {
        for (int k = 0; k < 3; k++)
            format_value(s[k], sizeof s[k], same ? lo : vals[k], unit, digits);
        if (same || (strcmp(s[0], s[1]) != 0 && strcmp(s[1], s[2]) != 0))
            break;
    }
    for (int k = 0; k < 3; k++) {
        if (same && k != 1)
            continue;
        fill_rect(&p->cv, x + BAR_W + 1, ys[k], 5, 1 + TEXT_SCALE / 2, INK);
        draw_fitting_text(&p->cv, x + BAR_W + 10, ys[k] - 7 * TEXT_SCALE / 2, s[k], INK);
    }
    const char *note = !same ? (logscale ? "log scale" : "linear scale")
                             : (hi > lo ? "all ~equal" : "all equal");
    draw_text(&p->cv, x, note_y(p, 0), note, TEXT_SCALE, INK);
}

/* When a map element stands for several cells, say how many and what it shows. */
static void draw_block_note(picture *p, int y, const char *how)
{
    if (p->geo.block == 1)
        return;
    /* rows x cols of one block, as grids are named; a strip's blocks are 1 cell thin */
    int br = p->geo.block < p->rows ? p->geo.block : p->rows;
    int bc = p->geo.block < p->cols ? p->geo.block : p->cols;
    char s[64];
    int px1 = p->geo.cell_w == 1 && p->geo.cell_h == 1;
    snprintf(s, sizeof s, "1 %s = %dx%d cells", px1 ? "px" : "block", br, bc);
    draw_fitting_text(&p->cv, legend_x(p), y, s, INK);
    draw_fitting_text(&p->cv, legend_x(p), y + LINE_H + 4, how, INK);
}

/* A swatch and its label in the note area below the bar (line 0, 1 or 2). */
static void draw_note_swatch(picture *p, int line, rgb col, const char *label)
{
    int x = legend_x(p), y = note_y(p, line);
    fill_rect(&p->cv, x, y, 14, 14, col);
    frame_rect(&p->cv, x - 1, y - 1, 16, 16, FRAME);
    draw_fitting_text(&p->cv, x + 22, y, label, INK);
}

/* libpng reports errors through this; the message is kept and control returns to setjmp. */
typedef struct png_errctx {
    char msg[256];
    int err; /* errno when libpng gave up, e.g. ENOSPC behind "Write Error" */
} png_errctx;

static void on_png_error(png_structp png, png_const_charp msg)
{
    png_errctx *ctx = png_get_error_ptr(png);
    if (ctx) {
        ctx->err = errno;
        snprintf(ctx->msg, sizeof ctx->msg, "%s", msg);
    }
    png_longjmp(png, 1);
}

static void on_png_warning(png_structp png, png_const_charp msg) { (void)png, (void)msg; }

/* @p ctx lives in the caller's frame: what libpng writes into it survives the longjmp. */
static int write_png(const char *path, const canvas *cv, png_errctx *ctx, lk_error *err)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return lk_fail(err, "%s: cannot create the PNG file: %s: check that the path names a "
                            "file in an existing, writable folder", path, strerror(errno));
    /* A failed write removes the partial file, but never a device such as /dev/full. */
    struct stat st;
    int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, ctx, on_png_error,
                                              on_png_warning);
    png_infop info = png ? png_create_info_struct(png) : NULL;
    if (!info) {
        png_destroy_write_struct(&png, NULL);
        fclose(f);
        if (regular)
            remove(path);
        return lk_fail(err, "%s: libpng could not start (out of memory?)", path);
    }
    if (setjmp(png_jmpbuf(png))) {
        png_destroy_write_struct(&png, &info);
        fclose(f);
        if (regular)
            remove(path);
        return lk_fail(err, "%s: libpng failed while writing the picture: %s%s%s: check the "
                            "free disk space", path, ctx->msg[0] ? ctx->msg : "unknown error",
                       ctx->err ? ": " : "", ctx->err ? strerror(ctx->err) : "");
    }
    errno = 0;
    png_init_io(png, f);
    png_set_IHDR(png, info, (png_uint_32)cv->w, (png_uint_32)cv->h, 8, PNG_COLOR_TYPE_RGB,
                 PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT, PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    for (int y = 0; y < cv->h; y++)
        png_write_row(png, cv->px + (size_t)y * (size_t)cv->w * 3);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    if (fflush(f) != 0 || ferror(f)) {
        int e = errno;
        fclose(f);
        if (regular)
            remove(path);
        return lk_fail(err, "%s: writing the PNG failed: %s: check the free disk space", path,
                       e ? strerror(e) : "I/O error");
    }
    if (fclose(f) != 0) {
        int e = errno;
        if (regular)
            remove(path);
        return lk_fail(err, "%s: closing the PNG failed: %s: check the free disk space", path,
                       strerror(e));
    }
    return 0;
}

static int finish(picture *p, const char *path, const char *title, lk_error *err)
{
    draw_title(&p->cv, title);
    png_errctx ctx = {{0}, 0};
    int rc = write_png(path, &p->cv, &ctx, err);
    free(p->cv.px);
    p->cv.px = NULL;
    return rc;
}

static int check_args(const char *fn, const char *path, const void *a, const char *aname,
                      const void *b, const char *bname, int rows, int cols, lk_error *err)
{
    if (!path || !*path)
        return lk_fail(err, "%s: no output path: pass the name of the PNG file to write", fn);
    if (!a || (bname && !b))
        return lk_fail(err, "%s: cannot draw the picture: grid %s is NULL: pass the data", path,
                       !a ? aname : bname);
    if (rows < 1 || cols < 1)
        return lk_fail(err, "%s: a %d x %d grid cannot be drawn: rows and cols must be at "
                            "least 1", path, rows, cols);
    return 0;
}

/* Standard hillshade (ESRI): light from azimuth 315 degrees, 45 degrees above the horizon. */
static double hillshade(const double *z, int rd, int cd, int r, int c, double cs)
{
    int l = c > 0 ? c - 1 : c, rt = c < cd - 1 ? c + 1 : c;
    int u = r > 0 ? r - 1 : r, dn = r < rd - 1 ? r + 1 : r;
    double zl = z[(size_t)r * cd + l], zr = z[(size_t)r * cd + rt];
    double zu = z[(size_t)u * cd + c], zd = z[(size_t)dn * cd + c];
    double dzdx = rt > l ? (zr - zl) / ((rt - l) * cs) : 0.0;
    double dzdy = dn > u ? (zd - zu) / ((dn - u) * cs) : 0.0; /* rows run south */
    if (!isfinite(dzdx))
        dzdx = 0.0;
    if (!isfinite(dzdy))
        dzdy = 0.0;
    const double pi = 3.14159265358979323846;
    const double zenith = pi / 4, azimuth = 3 * pi / 4; /* 90-45; 360-315+90 degrees */
    double slope = atan(sqrt(dzdx * dzdx + dzdy * dzdy));
    double aspect = atan2(dzdy, -dzdx);
    double hs = cos(zenith) * cos(slope) + sin(zenith) * sin(slope) * cos(azimuth - aspect);
    return hs < 0.0 ? 0.0 : hs > 1.0 ? 1.0 : hs;
}

int lk_png_terrain(const char *path, const double *z, const double *h, int rows, int cols,
                   double cellsize, double h_min, const char *title, lk_error *err)
{
    if (check_args("lk_png_terrain", path, z, "z (altitude)", h, "h (thickness)", rows, cols,
                   err) != 0)
        return -1;
    if (!(cellsize > 0.0) || !isfinite(cellsize))
        return lk_fail(err, "%s: cannot shade the terrain: cellsize %g is not a positive "
                            "number: pass the grid header's cellsize", path, cellsize);
    picture p;
    if (picture_init(&p, path, rows, cols, err) != 0)
        return -1;
    size_t nel = (size_t)p.rd * (size_t)p.cd;
    double *zd = calloc(nel, sizeof *zd), *hd = malloc(nel * sizeof *hd);
    int *zn = calloc(nel, sizeof *zn);
    uint8_t *bad = calloc(nel, 1);
    if (!zd || !hd || !zn || !bad) {
        free(zd), free(hd), free(zn), free(bad), free(p.cv.px);
        return lk_fail(err, "%s: out of memory for a %d x %d map", path, p.rd, p.cd);
    }
    /* Blocks: mean altitude keeps the relief, max thickness keeps thin flows visible. */
    for (size_t k = 0; k < nel; k++)
        hd[k] = -INFINITY;
    double lo = INFINITY, hi = -INFINITY;
    size_t nbad = 0;
    int b = p.geo.block;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            size_t src = (size_t)i * cols + j, dst = (size_t)(i / b) * p.cd + j / b;
            double zv = z[src], hv = h[src];
            if (isfinite(zv)) {
                zd[dst] += zv;
                zn[dst]++;
            }
            if (!isfinite(hv)) {
                bad[dst] = 1;
                nbad++;
            } else if (hv > h_min) {
                lo = hv < lo ? hv : lo;
                hi = hv > hi ? hv : hi;
                hd[dst] = hv > hd[dst] ? hv : hd[dst];
            }
        }
    }
    double zlo = INFINITY, zhi = -INFINITY;
    for (size_t k = 0; k < nel; k++) {
        zd[k] = zn[k] ? zd[k] / zn[k] : NAN;
        if (zn[k]) {
            zlo = zd[k] < zlo ? zd[k] : zlo;
            zhi = zd[k] > zhi ? zd[k] : zhi;
        }
    }
    int wet = lo <= hi;
    int logscale = wet && lo > 0.0 && hi / lo >= 100.0;
    for (int r = 0; r < p.rd; r++) {
        for (int c = 0; c < p.cd; c++) {
            size_t k = (size_t)r * p.cd + c;
            double hs = hillshade(zd, p.rd, p.cd, r, c, cellsize * b);
            /* A little brighter with altitude, so gentle valleys show where shading alone
               is flat. */
            double zt = zhi > zlo && isfinite(zd[k]) ? (zd[k] - zlo) / (zhi - zlo) : 0.5;
            uint8_t grey = (uint8_t)lround(255.0 * (0.16 + 0.64 * hs + 0.2 * zt));
            rgb col = {grey, grey, grey};
            if (bad[k]) {
                col = MAGENTA;
            } else if (hd[k] > -INFINITY) {
                rgb m = colormap(colour_t(hd[k], lo, hi, logscale));
                /* Mostly colour, a little shading so the relief shows through the flow. */
                const double a = 0.78;
                col.r = (uint8_t)lround(a * m.r + (1 - a) * grey);
                col.g = (uint8_t)lround(a * m.g + (1 - a) * grey);
                col.b = (uint8_t)lround(a * m.b + (1 - a) * grey);
            }
            paint_element(&p, r, c, col);
        }
    }
    free(zd), free(hd), free(zn), free(bad);

    if (wet) {
        draw_colour_legend(&p, "h (m)", lo, hi, logscale, " m");
    } else {
        char s[48];
        int x = legend_x(&p), by, bh;
        legend_bar_box(&p, &by, &bh);
        draw_text(&p.cv, x, p.geo.map_y, "h (m)", TEXT_SCALE, INK);
        format_value(s, sizeof s, h_min, " m", 3);
        draw_text(&p.cv, x, by, "no cell has", TEXT_SCALE, INK);
        char line[64];
        snprintf(line, sizeof line, "h > %s", s);
        draw_text(&p.cv, x, by + LINE_H + 4, line, TEXT_SCALE, INK);
    }
    if (nbad) {
        char s[48];
        snprintf(s, sizeof s, "%zu NaN/inf", nbad);
        draw_note_swatch(&p, 1, MAGENTA, s);
    }
    draw_block_note(&p, note_y(&p, nbad ? 2 : 1), "(max h, mean z)");
    return finish(&p, path, title, err);
}

int lk_png_field(const char *path, const double *v, int rows, int cols, const char *title,
                 lk_error *err)
{
    if (check_args("lk_png_field", path, v, "v (field)", NULL, NULL, rows, cols, err) != 0)
        return -1;
    picture p;
    if (picture_init(&p, path, rows, cols, err) != 0)
        return -1;
    size_t nel = (size_t)p.rd * (size_t)p.cd;
    double *sum = calloc(nel, sizeof *sum);
    int *n = calloc(nel, sizeof *n);
    uint8_t *bad = calloc(nel, 1);
    if (!sum || !n || !bad) {
        free(sum), free(n), free(bad), free(p.cv.px);
        return lk_fail(err, "%s: out of memory for a %d x %d map", path, p.rd, p.cd);
    }
    double lo = INFINITY, hi = -INFINITY;
    size_t nbad = 0;
    int b = p.geo.block;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            double x = v[(size_t)i * cols + j];
            size_t dst = (size_t)(i / b) * p.cd + j / b;
            if (!isfinite(x)) {
                bad[dst] = 1;
                nbad++;
                continue;
            }
            sum[dst] += x;
            n[dst]++;
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    }
    for (int r = 0; r < p.rd; r++) {
        for (int c = 0; c < p.cd; c++) {
            size_t k = (size_t)r * p.cd + c;
            rgb col = MAGENTA;
            if (!bad[k] && n[k]) {
                double m = sum[k] / n[k];
                col = colormap(colour_t(m, lo, hi, 0));
            }
            paint_element(&p, r, c, col);
        }
    }
    free(sum), free(n), free(bad);
    if (lo <= hi) {
        draw_colour_legend(&p, "value", lo, hi, 0, "");
    } else {
        int x = legend_x(&p), by, bh;
        legend_bar_box(&p, &by, &bh);
        draw_text(&p.cv, x, by, "no finite", TEXT_SCALE, INK);
        draw_text(&p.cv, x, by + LINE_H + 4, "value", TEXT_SCALE, INK);
    }
    if (nbad) {
        char s[48];
        snprintf(s, sizeof s, "%zu NaN/inf", nbad);
        draw_note_swatch(&p, 1, MAGENTA, s);
    }
    draw_block_note(&p, note_y(&p, nbad ? 2 : 1), "(their mean)");
    return finish(&p, path, title, err);
}

int lk_png_diff(const char *path, const double *expected, const double *got, int rows,
                int cols, lk_error *err)
{
    if (check_args("lk_png_diff", path, expected, "expected", got, "got", rows, cols, err) != 0)
        return -1;
    picture p;
    if (picture_init(&p, path, rows, cols, err) != 0)
        return -1;
    size_t nel = (size_t)p.rd * (size_t)p.cd;
    uint8_t *state = calloc(nel, 1); /* 0 equal, 1 differs, 2 differs and got is NaN */
    if (!state) {
        free(p.cv.px);
        return lk_fail(err, "%s: out of memory for a %d x %d map", path, p.rd, p.cd);
    }
    size_t ndiff = 0, nnan = 0;
    int b = p.geo.block;
    for (int i = 0; i < rows; i++) {
        for (int j = 0; j < cols; j++) {
            size_t src = (size_t)i * cols + j, dst = (size_t)(i / b) * p.cd + j / b;
            if (memcmp(&expected[src], &got[src], sizeof(double)) == 0)
                continue;
            ndiff++;
            uint8_t s = isnan(got[src]) ? 2 : 1;
            nnan += s == 2;
            if (s > state[dst])
                state[dst] = s;
        }
    }
    const rgb cols3[3] = {EQUAL_GREY, RED, MAGENTA};
    for (int r = 0; r < p.rd; r++)
        for (int c = 0; c < p.cd; c++)
            paint_element(&p, r, c, cols3[state[(size_t)r * p.cd + c]]);
    free(state);

    int x = legend_x(&p), y = p.geo.map_y;
    draw_text(&p.cv, x, y, "cells", TEXT_SCALE, INK);
    const char *labels[3] = {"equal", "differ", "got NaN"};
    for (int k = 0; k < 3; k++) {
        int sy = y + LINE_H + 12 + k * (LINE_H + 10);
        fill_rect(&p.cv, x, sy, 14, 14, cols3[k]);
        frame_rect(&p.cv, x - 1, sy - 1, 16, 16, FRAME);
        draw_text(&p.cv, x + 22, sy, labels[k], TEXT_SCALE, INK);
    }
    draw_block_note(&p, y + LINE_H + 12 + 3 * (LINE_H + 10) + 8, "(the worst)");
    char title[128];
    size_t ncells = (size_t)rows * (size_t)cols;
    if (ndiff == 0)
        snprintf(title, sizeof title, "all %zu cells identical (%d x %d grid)", ncells, rows,
                 cols);
    else if (nnan)
        snprintf(title, sizeof title, "%zu of %zu cells differ%s, %zu of them NaN", ndiff,
                 ncells, ndiff == 1 ? "s" : "", nnan);
    else
        snprintf(title, sizeof title, "%zu of %zu cells differ%s", ndiff, ncells,
                 ndiff == 1 ? "s" : "");
    return finish(&p, path, title, err);
}
