// Example submission "reference-lookup": a lab 01 with no GPU code that hands in the serial
// reference's answer. It reads its own executable (/proc/self/exe, through libc's open and
// read found at run time as `symbol-lookup` finds them), looks the reference's name up in
// the static symbol table and calls it on the grid it was given, so that no kit name appears
// in its object. In a driver that links the reference this is correct on every dataset. The
// grader links student code without it (GRADED=1: the name leads to lk_no_reference, which
// stops the driver): incorrect on every dataset, 0 points.

#include "lab.h"
#include "sciddicat/sciddicat.h"
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>

// ---- finding libc at run time -----------------------------------------------------------

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

typedef int (*open_fn)(const char *, int, ...);
typedef ssize_t (*read_fn)(int, void *, size_t);
typedef int (*close_fn)(int);
typedef int (*reference_fn)(const sciddicat *, int, double *, double *, lk_error *);

// The executable, read whole (at most 64 MiB); NULL when that fails.
static unsigned char *read_self(size_t *size)
{
    open_fn op = (open_fn)find("open");
    read_fn rd = (read_fn)find("read");
    close_fn cl = (close_fn)find("close");
    if (!op || !rd || !cl)
        return NULL;
    int fd = op("/proc/self/exe", O_RDONLY);
    if (fd < 0)
        return NULL;
    const size_t cap = 64u << 20;
    unsigned char *image = (unsigned char *)malloc(cap);
    size_t used = 0;
    ssize_t got;
    while (image && used < cap && (got = rd(fd, image + used, cap - used)) > 0)
        used += (size_t)got;
    cl(fd);
    *size = used;
    return image;
}

// The address of the function @p want, from the static symbol table of @p image and the
// load bias that lab01_gpu_run's own address gives away.
static void *static_symbol(const unsigned char *image, size_t size, const char *want)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
    if (size < sizeof *eh || eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        return NULL;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(image + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Sym *sym = (const Elf64_Sym *)(image + sh[i].sh_offset);
        const char *names = (const char *)(image + sh[sh[i].sh_link].sh_offset);
        const size_t n = sh[i].sh_size / sizeof *sym;
        Elf64_Addr wanted = 0, mine = 0;
        for (size_t k = 0; k < n; k++) {
            if (strcmp(names + sym[k].st_name, want) == 0)
                wanted = sym[k].st_value;
            else if (strcmp(names + sym[k].st_name, "lab01_gpu_run") == 0)
                mine = sym[k].st_value;
        }
        if (wanted && mine)
            return (void *)((uintptr_t)lab01_gpu_run - mine + wanted);
    }
    return NULL;
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    (void)block_x, (void)block_y;
    size_t size = 0;
    unsigned char *image = read_self(&size);
    char name[32] = "sciddicat_";
    strcat(name, "serial");
    reference_fn reference = image ? (reference_fn)static_symbol(image, size, name) : NULL;
    free(image);
    if (!reference)
        return lk_fail(err, "kernels.cu: the reference was not found");
    sciddicat sim;
    memset(&sim, 0, sizeof sim);
    sim.rows = rows;
    sim.cols = cols;
    sim.z = (double *)z;
    sim.h0 = (double *)h_in;
    return reference(&sim, steps, h_out, NULL, err);
}
