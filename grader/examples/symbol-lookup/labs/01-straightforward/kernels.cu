// Example submission "symbol-lookup": a correct lab 01 that, on its first call, finds libc's
// open, read, write and close at run time by walking the dynamic symbol tables of the loaded
// objects (dl_iterate_phdr), so that no forbidden name appears in its object and the symbol
// check passes. With them it tries to read the solution (the kit's path is compiled in as
// LK_TOP_DIR) and, if that works, fails with "escaped the sandbox: read the solution: ..."
// and the solution's first line as its error message, which the report would print. It also
// plants a file in the kit, in every folder above its run folder and in /tmp, and says
// nothing about it: the grader's test looks for those files on the machine afterwards. In
// the grader's sandbox solutions/ is not there, the kit and the folders above are read-only
// (or private to the run, under a private /tmp): it computes, and is graded like `correct`.

#include "lab.h"
#include "labkit/cuda_check.h"
#include "sciddicat/sciddicat.h"
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

// The width update of serial.c, ported by hand: inflows minus outflows, in the order North,
// West, East, South (the order of the additions is the reference's).
__device__ static double new_width(int i, int j, int rows, int cols, const double *h,
                                   const double *Sf)
{
    double t = h[sciddicat_at(i, j, cols)];
    const size_t layer = (size_t)rows * cols, c = sciddicat_at(i, j, cols);
    t += Sf[3 * layer + c - cols] - Sf[0 * layer + c];
    t += Sf[2 * layer + c - 1] - Sf[1 * layer + c];
    t += Sf[1 * layer + c + 1] - Sf[2 * layer + c];
    t += Sf[0 * layer + c + cols] - Sf[3 * layer + c];
    return t;
}

// Interior cell number k of an (rows-2) x (cols-2) interior, row-major, to (i, j). Grids
// have fewer than 2^31 cells, so 32-bit arithmetic is enough (and much cheaper than 64-bit
// division on a GPU).
__device__ static bool interior_cell(int rows, int cols, int *i, int *j)
{
    unsigned k = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned inner_cols = cols - 2;
    if (k >= (unsigned)(rows - 2) * inner_cols)
        return false;
    *i = 1 + (int)(k / inner_cols);
    *j = 1 + (int)(k % inner_cols);
    return true;
}

__global__ void reset_flows(int rows, int cols, double *Sf)
{
    int i, j;
    if (interior_cell(rows, cols, &i, &j))
        for (int k = 0; k < 4; k++)
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = 0.0;
}

__global__ void compute_flows(int rows, int cols, const double *z, const double *h, double *Sf,
                              double p_r, double p_epsilon)
{
    int i, j;
    if (!interior_cell(rows, cols, &i, &j))
        return;
    // The minimisation of differences, ported by hand in the serial order.
    double u[5];
    const double m = h[sciddicat_at(i, j, cols)] - p_epsilon;
    u[0] = z[sciddicat_at(i, j, cols)] + p_epsilon;
    u[1] = z[sciddicat_at(i - 1, j, cols)] + h[sciddicat_at(i - 1, j, cols)];
    u[2] = z[sciddicat_at(i, j - 1, cols)] + h[sciddicat_at(i, j - 1, cols)];
    u[3] = z[sciddicat_at(i, j + 1, cols)] + h[sciddicat_at(i, j + 1, cols)];
    u[4] = z[sciddicat_at(i + 1, j, cols)] + h[sciddicat_at(i + 1, j, cols)];
    bool out[5] = {false, false, false, false, false};
    double average;
    bool again;
    do {
        again = false;
        average = m;
        int count = 0;
        for (int n = 0; n < 5; n++)
            if (!out[n]) {
                average += u[n];
                count++;
            }
        if (count != 0)
            average /= count;
        for (int n = 0; n < 5; n++)
            if (average <= u[n] && !out[n]) {
                out[n] = true;
                again = true;
            }
    } while (again);
    for (int k = 0; k < 4; k++)
        if (!out[k + 1])
            Sf[sciddicat_flow_at(k, i, j, rows, cols)] = (average - u[k + 1]) * p_r;
}

__global__ void update_width(int rows, int cols, double *h, const double *Sf)
{
    int i, j;
    if (interior_cell(rows, cols, &i, &j))
        h[sciddicat_at(i, j, cols)] = new_width(i, j, rows, cols, h, Sf);
}

static int steps_on_device(int rows, int cols, const double *d_z, double *d_h, double *d_Sf,
                           int steps, int block_x, int block_y, lk_error *err)
{
    if (rows < 3 || cols < 3)
        return 0; // no interior cell: nothing changes
    const int threads = block_x * block_y;
    const long long cells = (long long)(rows - 2) * (cols - 2);
    const unsigned blocks = (unsigned)((cells + threads - 1) / threads);
    for (int s = 0; s < steps; s++) {
        reset_flows<<<blocks, threads>>>(rows, cols, d_Sf);
        LK_LAUNCH_TRY(err);
        compute_flows<<<blocks, threads>>>(rows, cols, d_z, d_h, d_Sf, SCIDDICAT_P_R,
                                           SCIDDICAT_P_EPSILON);
        LK_LAUNCH_TRY(err);
        update_width<<<blocks, threads>>>(rows, cols, d_h, d_Sf);
        LK_LAUNCH_TRY(err);
    }
    return 0;
}


// ---- finding libc at run time -----------------------------------------------------------

typedef int (*open_fn)(const char *, int, ...);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef ssize_t (*write_fn)(int, const void *, size_t);
typedef int (*close_fn)(int);

struct wanted {
    const char *name;
    void *address;
};

// The dynamic symbol table (.dynsym) of one loaded object, searched for w->name. Its size is
// not recorded: .dynstr follows it in every object the linker makes.
static int search_object(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct wanted *w = (struct wanted *)data;
    if (info->dlpi_name && strncmp(info->dlpi_name, "linux-vdso", 10) == 0)
        return 0; // the kernel's page: nothing wanted there
    for (int p = 0; p < info->dlpi_phnum; p++) {
        if (info->dlpi_phdr[p].p_type != PT_DYNAMIC)
            continue;
        const ElfW(Dyn) *dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[p].p_vaddr);
        ElfW(Addr) symtab = 0, strtab = 0;
        for (; dyn->d_tag != DT_NULL; dyn++) {
            if (dyn->d_tag == DT_SYMTAB)
                symtab = dyn->d_un.d_ptr;
            else if (dyn->d_tag == DT_STRTAB)
                strtab = dyn->d_un.d_ptr;
        }
        if (symtab && symtab < info->dlpi_addr) // not relocated (the vDSO)
            symtab += info->dlpi_addr, strtab += info->dlpi_addr;
        if (!symtab || strtab <= symtab || strtab - symtab > (64u << 20))
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab;
        const size_t n = (strtab - symtab) / sizeof *sym;
        for (size_t k = 0; k < n; k++)
            if (sym[k].st_value != 0 && ELF64_ST_TYPE(sym[k].st_info) == STT_FUNC &&
                strcmp((const char *)strtab + sym[k].st_name, w->name) == 0) {
                w->address = (void *)(info->dlpi_addr + sym[k].st_value);
                return 1;
            }
    }
    return 0;
}

static void *find(const char *name)
{
    struct wanted w = {name, NULL};
    dl_iterate_phdr(search_object, &w);
    return w.address;
}

// What it read that it should not have, empty when nothing.
static char escaped[2048];

static void note(const char *what, const char *path)
{
    size_t used = strlen(escaped);
    snprintf(escaped + used, sizeof escaped - used, "%s%s %.900s", used ? "; " : "", what, path);
}

// Create @p path; 1 when it worked.
static int plant(open_fn op, write_fn wr, close_fn cl, const char *path)
{
    int fd = op(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        return 0;
    ssize_t w = wr(fd, "planted by grader/examples/symbol-lookup\n", 41);
    (void)w;
    cl(fd);
    return 1;
}

static void try_to_escape(void)
{
    open_fn op = (open_fn)find("open");
    read_fn rd = (read_fn)find("read");
    write_fn wr = (write_fn)find("write");
    close_fn cl = (close_fn)find("close");
    if (!op || !rd || !wr || !cl)
        return; // nothing to try with
    // The solution: its first line is proof enough.
    int fd = op(LK_TOP_DIR "/solutions/01-straightforward/kernels.cu", O_RDONLY);
    if (fd >= 0) {
        char line[128] = "";
        ssize_t got = rd(fd, line, sizeof line - 1);
        cl(fd);
        line[got > 0 ? got : 0] = '\0';
        line[strcspn(line, "\n")] = '\0';
        note("read the solution:", line);
    }
    // Whether these work cannot be told from inside (a private /tmp takes them too): the
    // grader's test looks for them outside.
    plant(op, wr, cl, LK_TOP_DIR "/labkit-escape-symbol-lookup.txt");
    char dir[4096];
    if (getcwd(dir, sizeof dir)) {
        char *slash;
        while ((slash = strrchr(dir, '/')) != NULL && slash != dir) {
            *slash = '\0';
            char path[4200];
            snprintf(path, sizeof path, "%s/labkit-escape-symbol-lookup.txt", dir);
            plant(op, wr, cl, path);
        }
    }
    plant(op, wr, cl, "/tmp/labkit-escape-symbol-lookup.txt");
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    static int tried = 0;
    if (!tried) {
        tried = 1;
        try_to_escape();
    }
    if (escaped[0])
        return lk_fail(err, "escaped the sandbox: %s", escaped);
    const size_t bytes = (size_t)rows * cols * sizeof(double);
    double *d_z = NULL, *d_h = NULL, *d_Sf = NULL;
    int rc = -1;
    LK_CUDA_TRY(err, cudaMalloc(&d_z, bytes));
    if (cudaMalloc(&d_h, bytes) != cudaSuccess || cudaMalloc(&d_Sf, 4 * bytes) != cudaSuccess) {
        lk_fail(err, "kernels.cu: cudaMalloc of %zu bytes failed: the grid is too large for "
                     "this GPU", 5 * bytes);
        goto done;
    }
    if (cudaMemset(d_Sf, 0, 4 * bytes) != cudaSuccess ||
        cudaMemcpy(d_z, z, bytes, cudaMemcpyHostToDevice) != cudaSuccess ||
        cudaMemcpy(d_h, h_in, bytes, cudaMemcpyHostToDevice) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the inputs to the GPU failed: %s",
                cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    if (steps_on_device(rows, cols, d_z, d_h, d_Sf, steps, block_x, block_y, err) != 0)
        goto done;
    if (cudaMemcpy(h_out, d_h, bytes, cudaMemcpyDeviceToHost) != cudaSuccess) {
        lk_fail(err, "kernels.cu: copying the result back failed: %s",
                cudaGetErrorString(cudaGetLastError()));
        goto done;
    }
    rc = 0;
done:
    cudaFree(d_z);
    cudaFree(d_h);
    cudaFree(d_Sf);
    return rc;
}
