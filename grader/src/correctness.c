/* Correctness: the trusted solution's build, the serial reference's outputs (cached by
   dataset, steps and kit version), the student's run on each dataset, and the comparison of
   two output files following the lab's policy. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver.h"
#include "labkit/compare.h"
#include "labkit/grid_io.h"
#include "labkit/md5.h"
#include "stages.h"

static int output_hash(gr_policy policy, const double *v, int rows, int cols, char hex[33],
                       lk_error *err)
{
    if (policy == GR_POLICY_HASH_COURSE_TEXT)
        return lk_course_text_md5(v, rows, cols, hex, err);
    return lk_binary_md5(v, (size_t)rows * cols, hex, err);
}

/* Do two files of @p len bytes hold the same bytes? Compared in place in the page cache: a
   timed round's 400 MB output took a second to read into memory and compare cell by cell.
   0 also when either cannot be mapped (the full comparison then says why). */
static int same_bytes(const char *a, const char *b, size_t len)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC), same = 0;
    void *pa = MAP_FAILED, *pb = MAP_FAILED;
    struct stat sa, sb; /* a shorter file would fault beyond its end */
    if (fa >= 0 && fb >= 0 && len > 0 && fstat(fa, &sa) == 0 && fstat(fb, &sb) == 0 &&
        (size_t)sa.st_size == len && (size_t)sb.st_size == len) {
        pa = mmap(NULL, len, PROT_READ, MAP_SHARED, fa, 0);
        pb = mmap(NULL, len, PROT_READ, MAP_SHARED, fb, 0);
        same = pa != MAP_FAILED && pb != MAP_FAILED && memcmp(pa, pb, len) == 0;
    }
    if (pa != MAP_FAILED)
        munmap(pa, len);
    if (pb != MAP_FAILED)
        munmap(pb, len);
    if (fa >= 0)
        close(fa);
    if (fb >= 0)
        close(fb);
    return same;
}

/* Compare an output file with the reference. 1 same, 0 differs (reason, detail), -1 grader
   error (the reference cannot be read). @p ref_hash NULL compares bit for bit. */
int gr_compare_outputs(const gr_lab_rubric *lab, const char *ref_bin, const char *got_bin,
                           int rows, int cols, const char *ref_hash, char *reason, size_t size,
                           gr_buf *detail, lk_error *err)
{
    size_t n = (size_t)rows * cols;
    struct stat st;
    if (stat(got_bin, &st) != 0) {
        snprintf(reason, size, "the driver wrote no output file");
        return 0;
    }
    if ((size_t)st.st_size != n * sizeof(double)) {
        snprintf(reason, size, "the output has %lld bytes instead of %zu (%d x %d doubles)",
                 (long long)st.st_size, n * sizeof(double), rows, cols);
        return 0;
    }
    /* The same bits are the same hash; a tolerance judges NaNs and poison on the values. */
    if (lab->policy != GR_POLICY_TOLERANCE && same_bytes(ref_bin, got_bin, n * sizeof(double)))
        return 1;
    double *want = malloc(n * sizeof *want), *got = malloc(n * sizeof *got);
    lk_error e;
    int rc = -1;
    if (!want || !got) {
        lk_fail(err, "out of memory comparing %d x %d grids", rows, cols);
        goto done;
    }
    if (lk_read_binary(ref_bin, want, n, err) != 0)
        goto done;
    if (lk_read_binary(got_bin, got, n, &e) != 0) {
        snprintf(reason, size, "unreadable output: %.900s", e.msg);
        rc = 0;
        goto done;
    }
    char hex[33] = "";
    if (lab->policy != GR_POLICY_TOLERANCE && ref_hash) {
        if (output_hash(lab->policy, got, rows, cols, hex, err) != 0)
            goto done;
        if (strcmp(hex, ref_hash) == 0) {
            rc = 1;
            goto done;
        }
    }
    lk_compare c;
    size_t ndiff = lk_compare_grids(want, got, rows, cols, 8, &c);
    if (ndiff == 0) {
        rc = 1;
        goto done;
    }
    char explain[4096];
    lk_compare_format(explain, sizeof explain, &c, rows, cols, "output");
    gr_buf_puts(detail, explain);
    if (lab->policy == GR_POLICY_TOLERANCE) {
        int ok = c.nnan == 0 && c.npoison == 0 && c.max_rel <= lab->tolerance;
        snprintf(reason, size, "%zu of %zu cells differ, max relative difference %.3g %s the "
                 "bound %g%s", ndiff, n, c.max_rel, ok ? "within" : "beyond", lab->tolerance,
                 c.npoison ? " (some cells never written)" : c.nnan ? " (NaN values)" : "");
        rc = ok;
    } else if (hex[0]) {
        snprintf(reason, size, "md5 %s instead of %s: %zu of %zu cells differ, first at "
                 "(row %d, col %d)%s", hex, ref_hash, ndiff, n, c.first[0].row, c.first[0].col,
                 c.npoison ? ", some never written" : "");
        rc = 0;
    } else {
        snprintf(reason, size, "%zu of %zu cells differ from the solution's output, first at "
                 "(row %d, col %d)%s", ndiff, n, c.first[0].row, c.first[0].col,
                 c.npoison ? ", some never written" : "");
        rc = 0;
    }
done:
    free(want);
    free(got);
    return rc;
}

/* Build the solution's driver once per session: the trusted reference for serial outputs
   and the B side of the performance rounds. */
int gr_ensure_solution(gr_session *s, gr_lab_ctx *lc, lk_error *err)
{
    if (lc->ref_state != 0)
        return 0;
    const gr_lab_rubric *lab = lc->rub;
    char *src = gr_strf("%s/src", lc->kit_work);
    int rc = gr_rm_rf(lc->kit_work, err);
    static const char *const subdirs[] = {"src", "build", "logs", "tmp", "ref", "perf"};
    for (size_t i = 0; rc == 0 && i < sizeof subdirs / sizeof subdirs[0]; i++) {
        char *d = gr_strf("%s/%s", lc->kit_work, subdirs[i]);
        rc = gr_mkdir_p(d, 0755, err);
        free(d);
    }
    for (int f = 0; rc == 0 && f < lab->nfiles; f++) {
        char *from = gr_strf("%s/solutions/%s/%s", s->kit, lab->name, lab->files[f].name);
        char *to = gr_strf("%s/%s", src, lab->files[f].name);
        rc = gr_copy_untrusted(from, to, 16u << 20, err);
        free(from);
        free(to);
    }
    if (rc == 0)
        rc = gr_prepare_dir(s, lc->kit_work, err);
    if (rc != 0) {
        free(src);
        return -1;
    }
    gr_lab_result scratch;
    gr_lab_init(&scratch, lab->name, 0);
    int built = gr_build(&s->kitinfo, lab, lc->kit_work, src, 0, &scratch, err);
    free(src);
    if (built < 0) {
        gr_lab_free(&scratch);
        return -1;
    }
    if (built == 1) {
        lc->ref_state = 1;
        lc->ref_driver = gr_strf("%s/build/%s", lc->kit_work, lab->driver);
    } else {
        const gr_check *c = &scratch.checks[scratch.nchecks - 1];
        lc->ref_state = -1;
        lc->ref_error = gr_strf("the solution solutions/%s does not build: %s\n%s", lab->name,
                                c->reason, c->detail ? c->detail : "");
    }
    gr_lab_free(&scratch);
    return 0;
}

/* Move @p name out of a trusted run's box to @p to (same file system). */
static int rename_in_box(const gr_driver_run *dr, const char *name, const char *to)
{
    return renameat(dr->box_fd, name, AT_FDCWD, to);
}

int gr_reference_output(gr_session *s, gr_lab_ctx *lc, const char *refdrv, const char *flag,
                            const char *spec, int steps, gr_ref_output *ref, char *problem,
                            size_t psize, lk_error *err)
{
    memset(ref, 0, sizeof *ref);
    const gr_lab_rubric *lab = lc->rub;
    char *keytext = gr_strf("%s\n%s %s\n%d\n%s\n%d", lab->name, flag, spec, steps, lc->kit_hash,
                            (int)lab->policy);
    char key[33];
    int rc = lk_md5_buffer(keytext, strlen(keytext), key, err);
    free(keytext);
    if (rc != 0)
        return -1;
    /* With --session-state the cache serves every session on any GPU: the outputs are the
       serial reference's, the same bits everywhere. */
    char *dir = s->state_dir ? gr_strf("%s/reference/%s", s->state_dir, lab->name)
                             : gr_strf("%s/cache/reference/%s", s->out, lab->name);
    char *json_path = gr_strf("%s/%s.json", dir, key);
    ref->bin = gr_strf("%s/%s.bin", dir, key);
    rc = -1;
    int lock = -1;
    if (gr_mkdir_p(dir, 0755, err) != 0)
        goto done;
    /* Sessions sharing the cache at once (Slurm tasks, --gpus workers): one computes a
       dataset's reference, the others wait for it and take it from the cache. */
    char *lock_path = gr_strf("%s/%s.lock", dir, key);
    lock = gr_take_lock(lock_path, LOCK_EX, "serial reference", s->lock_timeout_s,
                        "waiting for another grader computing the same serial reference", err);
    free(lock_path);
    if (lock < 0)
        goto done;
    lk_error ignored;
    char *cached = gr_exists(json_path) ? gr_read_file(json_path, 1 << 20, NULL, &ignored) : NULL;
    gr_json *j = cached ? gr_json_parse(cached, json_path, &ignored) : NULL;
    free(cached);
    if (j) {
        struct stat st;
        const char *hash = gr_json_str(j, "hash");
        ref->rows = (int)gr_json_num(j, "rows", 0);
        ref->cols = (int)gr_json_num(j, "cols", 0);
        if (hash && strlen(hash) == 32 && ref->rows > 0 && ref->cols > 0 &&
            stat(ref->bin, &st) == 0 &&
            (size_t)st.st_size == (size_t)ref->rows * ref->cols * sizeof(double)) {
            snprintf(ref->hash, sizeof ref->hash, "%s", hash);
            gr_json_free(j);
            rc = 1;
            goto done;
        }
        gr_json_free(j);
    }
    {
        char *refdir = gr_strf("%s/ref", lc->kit_work);
        char steps_s[16];
        snprintf(steps_s, sizeof steps_s, "%d", steps);
        const char *args[] = {"--serial", flag, spec, "--steps", steps_s, "--bin", "ref.bin",
                              NULL};
        gr_driver_run dr;
        char reason[1024];
        gr_buf detail = {0};
        if (gr_run_driver(s, refdrv, refdir, args, gr_reference_ranks(lab),
                          fmax(lab->limit_run, lab->limit_perf), 1LL << 32, key, &dr, err) != 0) {
            gr_driver_run_free(&dr);
            free(refdir);
            goto done;
        }
        /* A trusted run (no student code), but read the way every output is read. */
        char why[512];
        int bin_fd = -1;
        char *tmp_bin = NULL;
        if (!gr_run_failed(&dr, NULL, reason, sizeof reason, &detail) &&
            (bin_fd = gr_run_output(&dr, "ref.bin", 0, why, sizeof why)) < 0) {
            snprintf(problem, psize, "the serial reference on %s %s (%d steps): %s", flag, spec,
                     steps, why);
            rc = 0;
        } else if (bin_fd < 0) {
            /* The kit's own run failed: its output is what the instructor needs to fix it. */
            char *said = gr_xstrdup(gr_buf_str(&detail));
            for (char *c = said; *c; c++)
                if (*c == '\n')
                    *c = ' ';
            snprintf(problem, psize, "the serial reference failed on %s %s (%d steps): %s%s%.600s",
                     flag, spec, steps, reason, said[0] ? "; it printed: " : "", said);
            free(said);
            rc = 0;
        } else {
            /* Models with several output fields (e.g. h, hu, hv) write them one after the
               other: the grader compares them as one grid of fields x rows rows. */
            ref->rows = (int)gr_json_num(dr.res, "rows", 0) *
                        (int)gr_json_num(dr.res, "fields", 1);
            ref->cols = (int)gr_json_num(dr.res, "cols", 0);
            const gr_json *serial = gr_json_get(dr.res, "serial");
            const char *driver_md5 = gr_json_str(serial, "md5");
            size_t n = (size_t)ref->rows * ref->cols;
            double *v = n ? malloc(n * sizeof *v) : NULL;
            tmp_bin = gr_fd_path(bin_fd);
            if (!v) {
                snprintf(problem, psize, "the serial reference gave no grid size for %s", spec);
                rc = 0;
            } else if (lk_read_binary(tmp_bin, v, n, err) != 0 ||
                       output_hash(lab->policy, v, ref->rows, ref->cols, ref->hash, err) != 0) {
                rc = -1;
            } else if (lab->policy == GR_POLICY_HASH_COURSE_TEXT && driver_md5 &&
                       strcmp(driver_md5, ref->hash) != 0) {
                snprintf(problem, psize, "the serial reference printed md5 %s for %s but its "
                         "output file hashes to %s: the kit's hashing is inconsistent",
                         driver_md5, spec, ref->hash);
                rc = 0;
            } else if (rename_in_box(&dr, "ref.bin", ref->bin) != 0) {
                rc = lk_fail(err, "%s: cannot move into the cache: %s", ref->bin, strerror(errno));
            } else {
                if (lchown(ref->bin, getuid(), getgid()) != 0) { /* best effort */ }
                char *js = gr_strf("{\"lab\":\"%s\",\"dataset\":\"%s %s\",\"steps\":%d,"
                                   "\"rows\":%d,\"cols\":%d,\"hash\":\"%s\"}\n", lab->name, flag,
                                   spec, steps, ref->rows, ref->cols, ref->hash);
                rc = gr_write_atomic_text(json_path, js, err) == 0 ? 1 : -1;
                free(js);
            }
            free(v);
        }
        if (bin_fd >= 0)
            close(bin_fd);
        gr_buf_free(&detail);
        if (rc == 1)
            gr_rm_rf(dr.top, NULL);
        gr_driver_run_free(&dr);
        free(refdir);
        free(tmp_bin);
    }
done:
    gr_gpu_unlock(lock);
    free(dir);
    free(json_path);
    if (rc != 1) {
        free(ref->bin);
        ref->bin = NULL;
    }
    return rc;
}

void gr_dataset_args(const gr_session *s, const gr_lab_ctx *lc, int i, const char **flag,
                     char *spec, int *steps)
{
    const gr_dataset *d = &lc->rub->datasets[i];
    if (d->hidden) {
        *flag = "--gen";
        snprintf(spec, 192, "%s:%llu", d->name, s->seed + (unsigned long long)i);
    } else {
        *flag = d->generated ? "--gen" : "--dataset";
        snprintf(spec, 192, "%s", d->name);
    }
    *steps = lc->steps[i];
}

/* The rubric's `judge trusted`: the kit's trusted driver judges the raw values that a
   student run left (*@p got) on the same input, in a box of its own under WORK/judge; *@p got
   becomes the judged file. 1 judged, 0 not (@p reason: the trusted driver refused the
   output, e.g. of the wrong size), -1 grader error. */
int gr_judge_output(gr_session *s, gr_lab_ctx *lc, const char *work, const char *tag,
                    const char *flag, const char *spec, int steps, long long bytes, int *got,
                    char *reason, size_t size, lk_error *err)
{
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    const char *args[] = {"--gpu", "--judge", "input.bin", flag, spec, "--steps", steps_s,
                          "--no-md5", "--bin", "judged.bin", NULL};
    char *base = gr_strf("%s/judge", work);
    gr_driver_run dr;
    int rc = gr_run_driver_on(s, lc->ref_driver, base, args, gr_reference_ranks(lc->rub),
                              lc->rub->limit_run, bytes, tag, *got, &dr, err);
    free(base);
    if (rc == 0) {
        gr_buf detail = {0};
        int judged = -1;
        if (gr_run_failed(&dr, NULL, reason, size, &detail) ||
            (judged = gr_run_output(&dr, "judged.bin", bytes, reason, size)) < 0) {
            rc = 0;
        } else {
            close(*got);
            *got = judged;
            rc = 1;
        }
        gr_buf_free(&detail);
        gr_rm_rf(dr.top, NULL);
    }
    gr_driver_run_free(&dr);
    return rc;
}

/* Run the student's driver on one dataset and judge its output. 1 pass, 0 fail, -1 error. */
int gr_check_dataset(gr_session *s, gr_lab_ctx *lc, const char *work, const char *driver,
                     const char *name, const char *flag, const char *spec, int steps,
                     int ranks, const gr_ref_output *ref, int idx, gr_lab_result *r, int *hung,
                     lk_error *err)
{
    char *rundir = gr_strf("%s/run", work);
    char *tag = ranks > 0 ? gr_strf("d%d-np%d", idx, ranks) : gr_strf("d%d", idx);
    char *src_prefix = gr_strf("%s/src/", work);
    char steps_s[16];
    snprintf(steps_s, sizeof steps_s, "%d", steps);
    const long long bin_bytes = (long long)ref->rows * ref->cols * 8;
    const char *args[] = {"--gpu", flag, spec, "--steps", steps_s, "--bin", "out.bin", NULL};
    gr_driver_run dr;
    int rc = gr_run_driver(s, driver, rundir, args, ranks, lc->rub->limit_run, bin_bytes, tag,
                           &dr, err);
    if (rc == 0) {
        char reason[1024];
        gr_buf detail = {0};
        int bin_fd = -1;
        if (gr_run_failed(&dr, src_prefix, reason, sizeof reason, &detail)) {
            *hung = dr.o.end == GR_END_TIMEOUT;
            gr_check *c = gr_lab_add(r, "correctness", name, GR_FAIL, reason, gr_buf_str(&detail));
            c->seconds = dr.o.wall_s;
        } else if ((bin_fd = gr_run_output(&dr, "out.bin", bin_bytes, reason,
                                           sizeof reason)) < 0 ||
                   (lc->rub->judge_trusted && lc->have_solution &&
                    (rc = gr_judge_output(s, lc, work, tag, flag, spec, steps, bin_bytes,
                                          &bin_fd, reason, sizeof reason, err)) != 1)) {
            if (rc >= 0) {
                gr_check *c = gr_lab_add(r, "correctness", name, GR_FAIL, reason, NULL);
                c->seconds = dr.o.wall_s;
                rc = 0;
            }
        } else {
            char *bin = gr_fd_path(bin_fd);
            int same = gr_compare_outputs(lc->rub, ref->bin, bin, ref->rows, ref->cols, ref->hash,
                                       reason, sizeof reason, &detail, err);
            if (same >= 0) {
                char *ok = gr_strf("%s %s", lc->rub->policy == GR_POLICY_TOLERANCE
                                                ? "within the tolerance of the reference,"
                                                : "md5 matches the serial reference:", ref->hash);
                gr_check *c = gr_lab_add(r, "correctness", name, same ? GR_PASS : GR_FAIL,
                                         same ? ok : reason, same ? NULL : gr_buf_str(&detail));
                c->seconds = dr.o.wall_s;
                free(ok);
            }
            rc = same;
            free(bin);
        }
        if (bin_fd >= 0)
            close(bin_fd);
        if (rc == 1)
            gr_rm_rf(dr.top, NULL); /* a failed run's box stays for a look */
        gr_buf_free(&detail);
    }
    gr_driver_run_free(&dr);
    free(rundir);
    free(tag);
    free(src_prefix);
    return rc;
}
