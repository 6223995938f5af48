// Example submission "output-link": a lab 01 with no GPU code at all. Its lab01_gpu_run
// returns at once; after main has written the (wrong) output, a destructor replaces the
// output file with a symbolic link to the solution's output on the same instance, at the
// path the grader used to keep it (the kit's path is compiled in as LK_TOP_DIR, the default
// report folder build/grade). libc's symlink and rename are found at run time
// (dl_iterate_phdr), as `symbol-lookup` finds open, so no forbidden name appears in its
// object. A grader that compares outputs by path follows the link and finds the solution's
// bits. This one opens outputs without following links: incorrect, every dataset ("its
// output out.bin is a symbolic link, not a file").

#include "lab.h"
#include <link.h>
#include <stdio.h>
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

typedef int (*symlink_fn)(const char *, const char *);
typedef int (*rename_fn)(const char *, const char *);

__attribute__((destructor)) static void swap_output_for_link(void)
{
    symlink_fn ln = (symlink_fn)find("symlink");
    rename_fn mv = (rename_fn)find("rename");
    if (!ln || !mv)
        return;
    ln(LK_TOP_DIR "/build/grade/work/kit/01-straightforward/perf/instance-0.bin", "out.link");
    mv("out.link", "out.bin");
}

extern "C" int lab01_gpu_run(int rows, int cols, const double *z, const double *h_in,
                             double *h_out, int steps, int block_x, int block_y, lk_error *err)
{
    (void)rows, (void)cols, (void)z, (void)h_in, (void)h_out, (void)steps;
    (void)block_x, (void)block_y, (void)err;
    return 0; // no GPU work: the link is to stand in for the result
}
