/* The machine's GPUs (nvidia-smi, or a stand-in command for the tests) and the choice of
   --gpus: the grader picks each worker's GPU itself, before any student code runs. */
#include "gpus.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/wait.h>

#include "util.h"

/* Cut the blanks around @p s in place. */
static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

int gr_list_gpus(gr_gpu **out, int *n, lk_error *err)
{
    *out = NULL;
    *n = 0;
    const char *cmd = getenv("LK_GPU_LIST_CMD");
    if (!cmd || !cmd[0])
        cmd = GR_GPU_LIST_CMD " 2>/dev/null";
    fflush(NULL);
    FILE *p = popen(cmd, "r"); /* the machine's own tool, or the tests' stand-in */
    if (!p)
        return lk_fail(err, "--gpus: cannot run '%s' to list the GPUs: is the NVIDIA driver "
                            "installed (nvidia-smi)?", cmd);
    char line[512];
    while (fgets(line, sizeof line, p)) {
        char *index = strtok(line, ","), *uuid = strtok(NULL, ","), *name = strtok(NULL, "\n");
        if (!index || !uuid || !name)
            continue;
        char *end;
        long i = strtol(trim(index), &end, 10);
        if (*end || i < 0 || i > 4096)
            continue;
        *out = gr_xrealloc(*out, (*n + 1) * sizeof **out);
        gr_gpu *g = &(*out)[(*n)++];
        g->index = (int)i;
        snprintf(g->uuid, sizeof g->uuid, "%s", trim(uuid));
        snprintf(g->name, sizeof g->name, "%s", trim(name));
    }
    int status = pclose(p);
    if (*n == 0) {
        free(*out);
        *out = NULL;
        return lk_fail(err, "--gpus: '%s' lists no GPU (exit status %d): grade without --gpus, "
                            "or on a machine whose nvidia-smi lists its GPUs", cmd,
                       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
    }
    return 0;
}

/* One GPU of a LIST: an index as nvidia-smi numbers it (at most 4 digits) or a UUID
   (GPU-...), which names a GPU whatever the enumeration (a Slurm task's GPU). */
static bool gpu_token_ok(const char *t, size_t len)
{
    if (len >= 5 && strncmp(t, "GPU-", 4) == 0 && len < sizeof(((gr_gpu *)0)->uuid))
        return strspn(t + 4, "0123456789abcdefABCDEF-") == len - 4;
    return len >= 1 && len <= 4 && strspn(t, "0123456789") == len;
}

/* A count N: digits alone, no comma. */
static bool gpu_spec_is_count(const char *spec)
{
    return spec[0] && strspn(spec, "0123456789") == strlen(spec);
}

int gr_gpus_spec_check(const char *spec, lk_error *err)
{
    if (strcmp(spec, "all") == 0)
        return 0;
    bool ok = true;
    for (const char *t = spec; ok; t++) {
        const size_t len = strcspn(t, ",");
        ok = gpu_token_ok(t, len);
        t += len;
        if (!*t)
            break;
    }
    if (!ok)
        return lk_fail(err, "--gpus %s: not a GPU choice: give all, a count N (the first N "
                            "GPUs), or indices as nvidia-smi numbers them or UUIDs (0,2 or "
                            "GPU-...)", spec);
    if (gpu_spec_is_count(spec) && atoi(spec) == 0)
        return lk_fail(err, "--gpus %s: a count of GPUs is at least 1 (the first N): give 1 for "
                            "GPU 0 alone, all, or indices such as 0,2", spec);
    return 0;
}

/* The machine's GPUs, "0 (NVIDIA H200), 1 (NVIDIA H200)", for a message. */
static char *gpu_names(const gr_gpu *all, int n)
{
    gr_buf b = {0};
    for (int i = 0; i < n; i++)
        gr_buf_printf(&b, "%s%d (%s)", i ? ", " : "", all[i].index, all[i].name);
    return gr_buf_take(&b);
}

int gr_pick_gpus(const char *spec, const gr_gpu *all, int n, gr_gpu **out, int *nout,
                 lk_error *err)
{
    *out = NULL;
    *nout = 0;
    if (gr_gpus_spec_check(spec, err) != 0)
        return -1;
    gr_gpu *pick = gr_xcalloc(n + 1, sizeof *pick);
    int k = 0, rc = 0;
    if (strcmp(spec, "all") == 0) {
        memcpy(pick, all, n * sizeof *pick);
        k = n;
    } else if (gpu_spec_is_count(spec)) {
        int want = atoi(spec);
        if (want > n) {
            char *has = gpu_names(all, n);
            rc = lk_fail(err, "--gpus %s: this machine has %d GPU%s: %s: give at most %d, or "
                              "all", spec, n, n == 1 ? "" : "s", has, n);
            free(has);
        }
        for (int i = 0; rc == 0 && i < want; i++)
            pick[k++] = all[i];
    } else {
        char *copy = gr_xstrdup(spec), *save = NULL;
        for (char *t = strtok_r(copy, ",", &save); t && rc == 0; t = strtok_r(NULL, ",", &save)) {
            bool by_uuid = strncmp(t, "GPU-", 4) == 0;
            int found = -1;
            for (int i = 0; i < n; i++)
                if (by_uuid ? strcasecmp(all[i].uuid, t) == 0 : all[i].index == atoi(t))
                    found = i;
            for (int i = 0; found >= 0 && i < k; i++)
                if (pick[i].index == all[found].index)
                    rc = lk_fail(err, "--gpus %s: GPU %s is named twice: name each GPU once",
                                 spec, t);
            if (rc == 0 && found < 0) {
                char *has = gpu_names(all, n);
                rc = lk_fail(err, "--gpus %s: this machine has no GPU %s: it has %s", spec, t,
                             has);
                free(has);
            }
            if (rc == 0) {
                pick = gr_xrealloc(pick, (k + 1) * sizeof *pick);
                pick[k++] = all[found];
            }
        }
        free(copy);
    }
    if (rc != 0) {
        free(pick);
        return -1;
    }
    *out = pick;
    *nout = k;
    return 0;
}

char *gr_gpu_lock_path(const char *lock, const gr_gpu *g)
{
    return g->index == 0 ? gr_xstrdup(lock) : gr_strf("%s.%s", lock, g->uuid);
}
