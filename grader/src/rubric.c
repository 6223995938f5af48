#include "rubric.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "course.h"
#include "util.h"

#define MAX_TOKENS 16

/* Keys seen in the current block, for "missing" and "given twice" messages. */
enum { K_DRIVER, K_FILE, K_ENTRY, K_POLICY, K_PUBLIC, K_HIDDEN, K_PERF, K_POINTS, K_CREDIT,
       K_CURVE, K_SPEEDUP, K_BASELINE, K_ROUNDS, K_REPEAT, K_LIMIT, K_FORBID, K_FORBID_SOURCE,
       K_PLAUSIBLE, K_RANKS, K_LAUNCHER, K_STRETCH, K_JUDGE, K_DEADLINE, K_LATE, K_CONTEST,
       K_RESUBMISSIONS, K_COUNT };

static const char *const key_names[K_COUNT] = {
    "driver", "student-file", "entry", "policy", "public", "hidden", "performance", "points",
    "credit", "curve", "min-speedup", "baseline", "rounds", "repeat", "time-limit",
    "forbid-symbol", "forbid-source", "plausible", "ranks", "launcher", "stretch", "judge",
    "deadline", "late", "contest", "resubmissions"};

/* Keys that may appear on several lines (their values accumulate). */
static int repeatable(int k)
{
    return k == K_FILE || k == K_ENTRY || k == K_PUBLIC || k == K_HIDDEN || k == K_FORBID ||
           k == K_FORBID_SOURCE || k == K_STRETCH;
}

/* How to write each key, for messages. */
static const char *const key_usage[K_COUNT] = {
    "driver PROGRAM (e.g. driver lab01)",
    "student-file NAME MAKEVAR (e.g. student-file kernels.cu KERNELS)",
    "entry FUNCTION... (e.g. entry lab01_gpu_run)",
    "policy hash course-text | policy hash binary | policy tolerance REL (e.g. 1e-12)",
    "public DATASET [STEPS] (a datasets/MANIFEST name, or KIND:ROWSxCOLS:SEED)",
    "hidden KIND:ROWSxCOLS STEPS (e.g. hidden plane:53x37 200)",
    "performance DATASET STEPS serial-steps N (e.g. performance sciddicat-large 200 serial-steps 5)",
    "points correctness N performance N (e.g. points correctness 70 performance 30)",
    "credit all | credit proportional",
    "curve full F zero Z (fractions of the solution's speed, e.g. curve full 0.8 zero 0.3)",
    "min-speedup X (e.g. min-speedup 5)",
    "baseline VARIANT steps N (e.g. baseline uncoalesced steps 5)",
    "rounds N [extra M] (e.g. rounds 2 extra 5)",
    "repeat N (e.g. repeat 5)",
    "time-limit [build S] [run S] [performance S] [relative F] (seconds; F: times the "
    "solution's performance call)",
    "forbid-symbol NAME|PREFIX*... (e.g. forbid-symbol sciddicat_load*)",
    "forbid-source IDENTIFIER... (e.g. forbid-source sciddicat_flows_cell)",
    "plausible bytes-per-cell-step B margin M factor F (e.g. plausible bytes-per-cell-step 24 "
    "margin 2 factor 3)",
    "ranks N... (process counts, e.g. ranks 1 2 4; with launcher mpirun)",
    "launcher mpirun",
    "stretch DATASET STEPS (a datasets/MANIFEST name, KIND:ROWSxCOLS:SEED, or KIND:ROWSxCOLS "
    "seeded at grading time; e.g. stretch bruss:97x97 60)",
    "judge trusted",
    "deadline DATE (UTC, e.g. deadline 2026-12-01T23:59:00Z, or with its offset "
    "2026-12-02T00:59:00+01:00)",
    "late per-day P floor F (percent of the lab's points, e.g. late per-day 10 floor 50)",
    "contest points P top K (bonus points for the K fastest correct submissions, e.g. "
    "contest points 5 top 3)",
    "resubmissions best | resubmissions last (of a student's attempts/, which counts)"};

typedef struct ctx {
    const char *path;
    int line;
    lk_error *err;
} ctx;

static int bad(ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int bad(ctx *c, const char *fmt, ...)
{
    char msg[LK_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return lk_fail(c->err, "%s:%d: %s", c->path, c->line, msg);
}

static int parse_num(ctx *c, const char *key, const char *s, double min, double max, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || errno == ERANGE || !isfinite(v))
        return bad(c, "%s: '%s' is not a number: write a plain number such as 0.8 or 30", key, s);
    if (v < min || v > max)
        return bad(c, "%s: %s is out of range: give a value from %g to %g", key, s, min, max);
    *out = v;
    return 0;
}

static int parse_count(ctx *c, const char *key, const char *s, long min, long max, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno == ERANGE || !isdigit((unsigned char)s[0]))
        return bad(c, "%s: '%s' is not a whole number: write e.g. 3", key, s);
    if (v < min || v > max)
        return bad(c, "%s: %s is out of range: give a whole number from %ld to %ld", key, s,
                   min, max);
    *out = (int)v;
    return 0;
}

static int copy_name(ctx *c, const char *key, const char *s, char *out, size_t size)
{
    if (strlen(s) >= size)
        return bad(c, "%s: '%.40s...' is too long: at most %zu characters", key, s, size - 1);
    strcpy(out, s);
    return 0;
}

static int is_word(const char *s, const char *extra)
{
    if (!*s)
        return 0;
    for (const char *p = s; *p; p++)
        if (!isalnum((unsigned char)*p) && !strchr(extra, *p))
            return 0;
    return 1;
}

/* KIND:ROWSxCOLS with an optional :SEED; the seed presence must equal @p with_seed. */
static int check_spec(ctx *c, const char *key, const char *s, int with_seed)
{
    char kind[32];
    unsigned long rows, cols;
    unsigned long long seed;
    int n = 0, m = 0;
    int ok = sscanf(s, "%31[a-z]:%lux%lu%n:%llu%n", kind, &rows, &cols, &n, &seed, &m);
    int has_seed = ok == 4 && m > 0 && s[m] == '\0';
    int no_seed = ok == 3 && n > 0 && s[n] == '\0';
    if (with_seed && no_seed)
        return bad(c, "%s: '%s' has no seed: write KIND:ROWSxCOLS:SEED (e.g. valley:97x131:7)",
                   key, s);
    if (!with_seed && has_seed)
        return bad(c, "%s: '%s' has a seed, but hidden datasets get theirs at grading time: "
                      "write KIND:ROWSxCOLS (e.g. plane:53x37)", key, s);
    if (!(with_seed ? has_seed : no_seed))
        return bad(c, "%s: '%s' is not a generator spec: write %s", key, s,
                   with_seed ? "KIND:ROWSxCOLS:SEED (e.g. valley:97x131:7)"
                             : "KIND:ROWSxCOLS (e.g. plane:53x37)");
    /* One-dimensional models (lab 05's string) put every point in one row. */
    if (rows < 1 || cols < 1 || (unsigned long long)rows * cols > (1ULL << 31))
        return bad(c, "%s: '%s': give at least one row and one column, at most 2^31 points "
                      "in all", key, s);
    return 0;
}

static int dataset_name(ctx *c, const char *key, const char *s, int hidden, gr_dataset *d)
{
    memset(d, 0, sizeof *d);
    d->hidden = hidden;
    d->line = c->line;
    d->steps = -1;
    d->generated = strchr(s, ':') != NULL;
    if (hidden || d->generated) {
        if (check_spec(c, key, s, !hidden) != 0)
            return -1;
    } else if (!is_word(s, "-_.")) {
        return bad(c, "%s: '%s' is not a dataset name: use a name of datasets/MANIFEST or "
                      "KIND:ROWSxCOLS:SEED", key, s);
    }
    return copy_name(c, key, s, d->name, sizeof d->name);
}

static int expect_args(ctx *c, int k, int ntok, int min, int max)
{
    int nargs = ntok - 1;
    if (nargs < min || nargs > max)
        return bad(c, "%s: %s: write %s", key_names[k],
                   nargs < min ? "missing value" : "too many values", key_usage[k]);
    return 0;
}

/* Parse "word value word value ..." pairs given by @p words; @p seen marks which came. */
static int parse_pairs(ctx *c, int k, char **tok, int ntok, const char *const *words,
                       int nwords, double *values, int *seen, double min, double max)
{
    if (ntok < 3 || (ntok - 1) % 2 != 0)
        return bad(c, "%s: write %s", key_names[k], key_usage[k]);
    for (int i = 1; i + 1 < ntok; i += 2) {
        int w;
        for (w = 0; w < nwords && strcmp(tok[i], words[w]) != 0; w++)
            ;
        if (w == nwords)
            return bad(c, "%s: unknown word '%s': write %s", key_names[k], tok[i], key_usage[k]);
        if (seen[w])
            return bad(c, "%s: '%s' given twice", key_names[k], words[w]);
        seen[w] = 1;
        char what[96];
        snprintf(what, sizeof what, "%s %s", key_names[k], words[w]);
        if (parse_num(c, what, tok[i + 1], min, max, &values[w]) != 0)
            return -1;
    }
    return 0;
}

static void lab_defaults(gr_lab_rubric *lab)
{
    lab->credit_all = 1;
    lab->rounds = 2;
    lab->extra_rounds = 5;
    lab->repeat = 5;
    lab->limit_build = 600;
    lab->limit_run = 60;
    lab->limit_perf = 300;
    lab->limit_relative = 50;
}

static int parse_driver(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (!is_word(tok[1], "-_."))
        return bad(c, "driver: '%s' is not a program name: write %s", tok[1], key_usage[k]);
    return copy_name(c, "driver", tok[1], lab->driver, sizeof lab->driver);
}

static int parse_file(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 2, 2) != 0)
        return -1;
    if (lab->nfiles == GR_MAX_FILES)
        return bad(c, "student-file: more than %d student files in one lab", GR_MAX_FILES);
    if (!is_word(tok[1], "-_.") || tok[1][0] == '.')
        return bad(c, "student-file: '%s' is not a plain file name (no folders, no leading "
                      "dot): write %s", tok[1], key_usage[k]);
    if (!is_word(tok[2], "_") || !isupper((unsigned char)tok[2][0]))
        return bad(c, "student-file: '%s' is not a make variable name (capitals, digits, "
                      "'_'): write %s", tok[2], key_usage[k]);
    for (int i = 0; i < lab->nfiles; i++)
        if (strcmp(lab->files[i].name, tok[1]) == 0)
            return bad(c, "student-file: '%s' is listed twice", tok[1]);
    gr_student_file *f = &lab->files[lab->nfiles];
    if (copy_name(c, "student-file", tok[1], f->name, sizeof f->name) != 0 ||
        copy_name(c, "student-file", tok[2], f->var, sizeof f->var) != 0)
        return -1;
    lab->nfiles++;
    return 0;
}

static int parse_entry(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, MAX_TOKENS) != 0)
        return -1;
    for (int i = 1; i < ntok; i++) {
        if (lab->nentries == GR_MAX_FILES)
            return bad(c, "entry: more than %d entry points", GR_MAX_FILES);
        if (!is_word(tok[i], "_") || isdigit((unsigned char)tok[i][0]))
            return bad(c, "entry: '%s' is not a C function name", tok[i]);
        if (copy_name(c, "entry", tok[i], lab->entries[lab->nentries], GR_NAME_MAX) != 0)
            return -1;
        lab->nentries++;
    }
    return 0;
}

static int parse_policy(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (ntok == 3 && strcmp(tok[1], "hash") == 0 && strcmp(tok[2], "course-text") == 0)
        lab->policy = GR_POLICY_HASH_COURSE_TEXT;
    else if (ntok == 3 && strcmp(tok[1], "hash") == 0 && strcmp(tok[2], "binary") == 0)
        lab->policy = GR_POLICY_HASH_BINARY;
    else if (ntok == 3 && strcmp(tok[1], "tolerance") == 0) {
        lab->policy = GR_POLICY_TOLERANCE;
        if (parse_num(c, "policy tolerance", tok[2], 0, 1, &lab->tolerance) != 0)
            return -1;
        if (lab->tolerance <= 0)
            return bad(c, "policy tolerance: the bound must be above 0 (use `policy hash "
                          "binary` for exact results)");
    } else
        return bad(c, "policy: write %s", key_usage[k]);
    return 0;
}

static int parse_dataset(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    int hidden = k == K_HIDDEN;
    if (expect_args(c, k, ntok, hidden ? 2 : 1, 2) != 0)
        return -1;
    gr_dataset d;
    if (dataset_name(c, key_names[k], tok[1], hidden, &d) != 0)
        return -1;
    if (ntok == 3 && parse_count(c, key_names[k], tok[2], 0, 100000000, &d.steps) != 0)
        return -1;
    if (!hidden && d.generated && d.steps < 0)
        return bad(c, "public: '%s' is generated, so it has no default steps: write "
                      "public %s STEPS", tok[1], tok[1]);
    for (int i = 0; i < lab->ndatasets; i++)
        if (strcmp(lab->datasets[i].name, d.name) == 0 && lab->datasets[i].steps == d.steps &&
            lab->datasets[i].hidden == d.hidden)
            return bad(c, "%s: '%s' is already listed (line %d)", key_names[k], d.name,
                       lab->datasets[i].line);
    lab->datasets = gr_xrealloc(lab->datasets, (lab->ndatasets + 1) * sizeof d);
    lab->datasets[lab->ndatasets++] = d;
    return 0;
}

static int parse_perf(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (ntok != 5 || strcmp(tok[3], "serial-steps") != 0)
        return bad(c, "performance: write %s", key_usage[k]);
    if (dataset_name(c, "performance", tok[1], 0, &lab->perf) != 0 ||
        parse_count(c, "performance", tok[2], 1, 100000000, &lab->perf.steps) != 0 ||
        parse_count(c, "performance serial-steps", tok[4], 1, 100000000,
                    &lab->serial_steps) != 0)
        return -1;
    return 0;
}

static int parse_points(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"correctness", "performance"};
    double v[2] = {0, 0};
    int seen[2] = {0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 2, v, seen, 0, 1e6) != 0)
        return -1;
    if (!seen[0] || !seen[1])
        return bad(c, "points: give both: write %s", key_usage[k]);
    if (v[0] + v[1] <= 0)
        return bad(c, "points: the lab is worth 0 points: give correctness or performance "
                      "points above 0");
    lab->points_correct = v[0];
    lab->points_perf = v[1];
    return 0;
}

static int parse_credit(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (strcmp(tok[1], "all") == 0)
        lab->credit_all = 1;
    else if (strcmp(tok[1], "proportional") == 0)
        lab->credit_all = 0;
    else
        return bad(c, "credit: '%s' is not a credit rule: write %s", tok[1], key_usage[k]);
    return 0;
}

static int parse_curve(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"full", "zero"};
    double v[2] = {0, 0};
    int seen[2] = {0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 2, v, seen, 0, 100) != 0)
        return -1;
    if (!seen[0] || !seen[1])
        return bad(c, "curve: give both points: write %s", key_usage[k]);
    if (v[0] <= v[1])
        return bad(c, "curve: full %g is not above zero %g: full credit must need more "
                      "speed than zero credit (e.g. curve full 0.8 zero 0.3)", v[0], v[1]);
    lab->curve_full = v[0];
    lab->curve_zero = v[1];
    return 0;
}

static int parse_speedup(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    return parse_num(c, "min-speedup", tok[1], 0, 1e9, &lab->min_speedup);
}

static int parse_baseline(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (ntok < 4)
        return bad(c, "baseline: missing %s: write %s", ntok < 2 ? "value" : "'steps N'",
                   key_usage[k]);
    if (ntok > 4)
        return bad(c, "baseline: too many values: write %s", key_usage[k]);
    /* The name goes to the driver's --variant as it is: a plain word of its size. */
    if (!is_word(tok[1], "-_") || !isalnum((unsigned char)tok[1][0]) ||
        strlen(tok[1]) >= sizeof lab->baseline)
        return bad(c, "baseline: '%s' is not a variant name (letters, digits, '-' and '_', "
                      "starting with a letter or digit, at most %zu): write %s", tok[1],
                   sizeof lab->baseline - 1, key_usage[k]);
    if (strcmp(tok[2], "steps") != 0)
        return bad(c, "baseline: unknown word '%s' where 'steps' belongs: write %s", tok[2],
                   key_usage[k]);
    if (parse_count(c, "baseline steps", tok[3], 1, 100000000, &lab->baseline_steps) != 0)
        return -1;
    strcpy(lab->baseline, tok[1]);
    return 0;
}

static int parse_rounds(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (ntok == 2)
        lab->extra_rounds = 0;
    else if (ntok != 4 || strcmp(tok[2], "extra") != 0)
        return bad(c, "rounds: write %s", key_usage[k]);
    if (parse_count(c, "rounds", tok[1], 1, 100, &lab->rounds) != 0 ||
        (ntok == 4 && parse_count(c, "rounds extra", tok[3], 0, 100, &lab->extra_rounds) != 0))
        return -1;
    return 0;
}

static int parse_repeat(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    return parse_count(c, "repeat", tok[1], 1, 1000, &lab->repeat);
}

static int parse_limit(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"build", "run", "performance", "relative"};
    double v[4] = {lab->limit_build, lab->limit_run, lab->limit_perf, lab->limit_relative};
    int seen[4] = {0, 0, 0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 4, v, seen, 1, 86400) != 0)
        return -1;
    /* Below a few times the solution's time, noise alone would fail an honest kernel. */
    if (seen[3] && (v[3] < 5 || v[3] > 1000))
        return bad(c, "%s relative: %g is outside 5..1000 (times the solution's call)",
                   key_names[k], v[3]);
    lab->limit_build = v[0];
    lab->limit_run = v[1];
    lab->limit_perf = v[2];
    lab->limit_relative = v[3];
    return 0;
}

static int parse_forbid(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, MAX_TOKENS) != 0)
        return -1;
    for (int i = 1; i < ntok; i++) {
        size_t n = strlen(tok[i]);
        int star = n > 1 && tok[i][n - 1] == '*';
        char stem[GR_NAME_MAX];
        snprintf(stem, sizeof stem, "%.*s", (int)(star ? n - 1 : n), tok[i]);
        if (!is_word(stem, "_.$"))
            return bad(c, "forbid-symbol: '%s' is not a symbol name or PREFIX*", tok[i]);
        if (lab->nforbid == (int)(sizeof lab->forbid / sizeof lab->forbid[0]))
            return bad(c, "forbid-symbol: more than %zu patterns in one lab",
                       sizeof lab->forbid / sizeof lab->forbid[0]);
        if (copy_name(c, "forbid-symbol", tok[i], lab->forbid[lab->nforbid], GR_NAME_MAX) != 0)
            return -1;
        lab->nforbid++;
    }
    return 0;
}

static int parse_forbid_source(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, MAX_TOKENS) != 0)
        return -1;
    for (int i = 1; i < ntok; i++) {
        if (!is_word(tok[i], "_") || (tok[i][0] >= '0' && tok[i][0] <= '9'))
            return bad(c, "forbid-source: '%s' is not a C identifier: write %s", tok[i],
                       key_usage[k]);
        if (lab->nforbid_source == (int)(sizeof lab->forbid_source /
                                         sizeof lab->forbid_source[0]))
            return bad(c, "forbid-source: more than %zu identifiers in one lab",
                       sizeof lab->forbid_source / sizeof lab->forbid_source[0]);
        if (copy_name(c, "forbid-source", tok[i], lab->forbid_source[lab->nforbid_source],
                      GR_NAME_MAX) != 0)
            return -1;
        lab->nforbid_source++;
    }
    return 0;
}

static int parse_plausible(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"bytes-per-cell-step", "margin", "factor"};
    double v[3] = {0, 0, 0};
    int seen[3] = {0, 0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 3, v, seen, 0, 1e9) != 0)
        return -1;
    for (int i = 0; i < 3; i++)
        if (!seen[i] || !(v[i] > 0))
            return bad(c, "plausible: '%s' %s: write %s", words[i],
                       seen[i] ? "must be positive" : "is missing", key_usage[k]);
    if (v[1] < 1 || v[2] < 1)
        return bad(c, "plausible: margin and factor are at least 1 (a bound divided by "
                      "less than 1 would flag honest runs): write %s", key_usage[k]);
    lab->plausible_bytes = v[0];
    lab->plausible_margin = v[1];
    lab->plausible_factor = v[2];
    return 0;
}

static int parse_ranks(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, GR_MAX_RANKS) != 0)
        return -1;
    for (int i = 1; i < ntok; i++) {
        int n;
        if (parse_count(c, "ranks", tok[i], 1, 1024, &n) != 0)
            return -1;
        for (int j = 0; j < lab->nranks; j++)
            if (lab->ranks[j] == n)
                return bad(c, "ranks: %d is given twice: list each process count once", n);
        lab->ranks[lab->nranks++] = n;
    }
    return 0;
}

static int parse_stretch(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 2, 2) != 0)
        return -1;
    /* KIND:ROWSxCOLS (two fields) is seeded at grading time, like a hidden dataset. */
    const char *colon = strchr(tok[1], ':');
    const int seeded_later = colon && !strchr(colon + 1, ':');
    gr_dataset d;
    if (dataset_name(c, "stretch", tok[1], seeded_later, &d) != 0 ||
        parse_count(c, "stretch", tok[2], 1, 100000000, &d.steps) != 0)
        return -1;
    for (int i = 0; i < lab->nstretch; i++)
        if (strcmp(lab->stretch[i].name, d.name) == 0 && lab->stretch[i].steps == d.steps)
            return bad(c, "stretch: '%s' is already listed (line %d)", d.name,
                       lab->stretch[i].line);
    lab->stretch = gr_xrealloc(lab->stretch, (lab->nstretch + 1) * sizeof d);
    lab->stretch[lab->nstretch++] = d;
    return 0;
}

static int parse_launcher(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (strcmp(tok[1], "mpirun") != 0)
        return bad(c, "launcher: unknown launcher '%s': write %s", tok[1], key_usage[k]);
    lab->launcher = GR_LAUNCHER_MPIRUN;
    return 0;
}

static int parse_judge(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (strcmp(tok[1], "trusted") != 0)
        return bad(c, "judge: unknown judge '%s': write %s", tok[1], key_usage[k]);
    lab->judge_trusted = 1;
    return 0;
}

static int parse_deadline(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (gr_parse_utc(tok[1], &lab->deadline) != 0)
        return bad(c, "deadline: '%s' is not a date: write %s", tok[1], key_usage[k]);
    lab->deadline_set = 1;
    return 0;
}

static int parse_late(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"per-day", "floor"};
    double v[2] = {0, 0};
    int seen[2] = {0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 2, v, seen, 0, 100) != 0)
        return -1;
    if (!seen[0] || !seen[1])
        return bad(c, "late: give both: write %s", key_usage[k]);
    lab->late_per_day = v[0];
    lab->late_floor = v[1];
    return 0;
}

static int parse_contest(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    static const char *const words[] = {"points", "top"};
    double v[2] = {0, 0};
    int seen[2] = {0, 0};
    if (parse_pairs(c, k, tok, ntok, words, 2, v, seen, 0, 1e6) != 0)
        return -1;
    if (!seen[0] || !seen[1])
        return bad(c, "contest: give both: write %s", key_usage[k]);
    if (v[1] < 1 || v[1] != floor(v[1]))
        return bad(c, "contest top: %g is not a whole number of submissions from 1: write %s",
                   v[1], key_usage[k]);
    lab->contest_points = v[0];
    lab->contest_top = (int)v[1];
    return 0;
}

static int parse_resubmissions(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (expect_args(c, k, ntok, 1, 1) != 0)
        return -1;
    if (strcmp(tok[1], "best") != 0 && strcmp(tok[1], "last") != 0)
        return bad(c, "resubmissions: '%s' is not a rule: write %s", tok[1], key_usage[k]);
    lab->resubmit_best = strcmp(tok[1], "best") == 0;
    return 0;
}

/* The course's late tokens: a line of its own, outside the lab blocks, once. */
static int parse_late_tokens(ctx *c, gr_rubric *r, char **tok, int ntok)
{
    if (ntok != 2)
        return bad(c, "late-tokens: write late-tokens N (days late each student may use "
                      "over the course, e.g. late-tokens 3)");
    if (r->late_tokens_line)
        return bad(c, "late-tokens given twice (line %d): keep one", r->late_tokens_line);
    r->late_tokens_line = c->line;
    return parse_count(c, "late-tokens", tok[1], 0, 1000, &r->late_tokens);
}

/* One parser a key. */
static int (*const key_parsers[])(ctx *, gr_lab_rubric *, int, char **, int) = {
    [K_DRIVER] = parse_driver,
    [K_FILE] = parse_file,
    [K_ENTRY] = parse_entry,
    [K_POLICY] = parse_policy,
    [K_PUBLIC] = parse_dataset,
    [K_HIDDEN] = parse_dataset,
    [K_PERF] = parse_perf,
    [K_POINTS] = parse_points,
    [K_CREDIT] = parse_credit,
    [K_CURVE] = parse_curve,
    [K_SPEEDUP] = parse_speedup,
    [K_BASELINE] = parse_baseline,
    [K_ROUNDS] = parse_rounds,
    [K_REPEAT] = parse_repeat,
    [K_LIMIT] = parse_limit,
    [K_FORBID] = parse_forbid,
    [K_FORBID_SOURCE] = parse_forbid_source,
    [K_PLAUSIBLE] = parse_plausible,
    [K_RANKS] = parse_ranks,
    [K_STRETCH] = parse_stretch,
    [K_LAUNCHER] = parse_launcher,
    [K_JUDGE] = parse_judge,
    [K_DEADLINE] = parse_deadline,
    [K_LATE] = parse_late,
    [K_CONTEST] = parse_contest,
    [K_RESUBMISSIONS] = parse_resubmissions,
};

static int parse_key(ctx *c, gr_lab_rubric *lab, int k, char **tok, int ntok)
{
    if (k < 0 || k >= (int)(sizeof key_parsers / sizeof key_parsers[0]) || !key_parsers[k])
        return bad(c, "internal error: key %d has no parser", k);
    return key_parsers[k](c, lab, k, tok, ntok);
}

static int finish_lab(ctx *c, gr_lab_rubric *lab, const int *seen)
{
    static const int required[] = {K_DRIVER, K_FILE, K_ENTRY, K_POLICY, K_PUBLIC, K_PERF,
                                   K_POINTS, K_CURVE, K_SPEEDUP};
    c->line = lab->line;
    for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
        if (!seen[required[i]])
            return bad(c, "lab %s: no '%s' line: add one, e.g. %s", lab->name,
                       key_names[required[i]], key_usage[required[i]]);
    if (seen[K_RANKS] != seen[K_LAUNCHER])
        return bad(c, "lab %s: %s", lab->name,
                   seen[K_RANKS] ? "'ranks' needs a launcher that starts that many processes: "
                                   "add 'launcher mpirun'"
                                 : "'launcher mpirun' needs the process counts to check: add "
                                   "e.g. 'ranks 1 2 4'");
    if (seen[K_LATE] && !seen[K_DEADLINE])
        return bad(c, "lab %s: 'late' needs a deadline to be late for: add e.g. %s", lab->name,
                   key_usage[K_DEADLINE]);
    /* Public datasets first, then hidden ones: reports list them in that order. */
    gr_dataset *sorted = gr_xmalloc(lab->ndatasets * sizeof *sorted);
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < lab->ndatasets; i++)
            if (lab->datasets[i].hidden == pass)
                sorted[n++] = lab->datasets[i];
    free(lab->datasets);
    lab->datasets = sorted;
    return 0;
}

/* What one rubric text may hold: a whole rubric (--rubric FILE: any blocks and the course
   lines), one lab folder's block (labs/NAME/rubric), or the course lines alone
   (grader/rubric.txt, whose blocks live in the lab folders). */
typedef struct text_kind {
    const char *lab; /* the one lab the text describes (labs/NAME/rubric), or NULL */
    int course_only; /* 1: no lab block may appear (grader/rubric.txt) */
} text_kind;

/* Parse @p text, appending its labs and course lines to @p r; -1 on the first error. */
static int parse_text(const char *path, const char *text, text_kind kind, gr_rubric *r,
                      lk_error *err)
{
    ctx c = {path, 0, err};
    gr_lab_rubric *lab = NULL;
    int seen[K_COUNT];
    int nlabs_before = r->nlabs;
    const char *p = text;
    while (*p) {
        c.line++;
        const char *eol = strchr(p, '\n');
        size_t len = eol ? (size_t)(eol - p) : strlen(p);
        char *line = gr_xmalloc(len + 1);
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (eol ? 1 : 0);
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char *tok[MAX_TOKENS + 2];
        int ntok = 0, rc = 0;
        for (char *s = line; rc == 0 && *s; s++)
            if ((unsigned char)*s < 0x20 && *s != '\t' && *s != '\r' && *s != '\f' && *s != '\v')
                rc = bad(&c, "control character 0x%02x: the rubric is plain text", *s);
        for (char *s = rc ? NULL : strtok(line, " \t\r\f\v"); s;
             s = strtok(NULL, " \t\r\f\v")) {
            if (ntok == MAX_TOKENS + 1) {
                rc = bad(&c, "too many words on one line (at most %d): split the line",
                         MAX_TOKENS);
                break;
            }
            tok[ntok++] = s;
        }
        if (rc == 0 && ntok > 0) {
            if (strcmp(tok[0], "lab") == 0) {
                if (lab)
                    rc = bad(&c, "lab %s starts before lab %s (line %d) ends: add 'end' after "
                                 "the previous lab", ntok > 1 ? tok[1] : "?", lab->name, lab->line);
                else if (ntok != 2)
                    rc = bad(&c, "lab: write 'lab NAME' with the lab's folder name, e.g. "
                                 "lab 01-straightforward");
                else if (!is_word(tok[1], "-_.") || !isdigit((unsigned char)tok[1][0]) ||
                         !isdigit((unsigned char)tok[1][1]) || tok[1][2] != '-')
                    rc = bad(&c, "lab: '%s' is not a lab folder name (NN-name, as under labs/)",
                             tok[1]);
                else if (kind.course_only)
                    rc = bad(&c, "lab %s: a lab's block lives in its folder: move it to "
                                 "labs/%s/rubric", tok[1], tok[1]);
                else if (kind.lab && strcmp(tok[1], kind.lab) != 0)
                    rc = bad(&c, "lab %s: this is the rubric of labs/%s, which describes that "
                                 "lab only: write 'lab %s' (lab %s's block goes in "
                                 "labs/%s/rubric)", tok[1], kind.lab, kind.lab, tok[1], tok[1]);
                else if (gr_rubric_find(r, tok[1]))
                    rc = bad(&c, "lab %s: already described at line %d", tok[1],
                             gr_rubric_find(r, tok[1])->line);
                else {
                    r->labs = gr_xrealloc(r->labs, (r->nlabs + 1) * sizeof *r->labs);
                    lab = &r->labs[r->nlabs++];
                    memset(lab, 0, sizeof *lab);
                    lab_defaults(lab);
                    lab->line = c.line;
                    rc = copy_name(&c, "lab", tok[1], lab->name, sizeof lab->name);
                    if (rc == 0)
                        rc = copy_name(&c, "lab", path, lab->file, sizeof lab->file);
                    memset(seen, 0, sizeof seen);
                }
            } else if (strcmp(tok[0], "end") == 0) {
                if (!lab)
                    rc = bad(&c, "'end' without a 'lab' line before it");
                else if (ntok != 1)
                    rc = bad(&c, "end: nothing may follow 'end' on its line");
                else {
                    int end_line = c.line;
                    rc = finish_lab(&c, lab, seen);
                    c.line = end_line;
                    lab = NULL;
                }
            } else if (!lab && strcmp(tok[0], "late-tokens") == 0) {
                rc = kind.lab ? bad(&c, "late-tokens: the late tokens are the course's, not "
                                        "one lab's: put the line in grader/rubric.txt")
                              : parse_late_tokens(&c, r, tok, ntok);
            } else if (!lab) {
                rc = bad(&c, "'%s' outside a lab block: start the block with 'lab NAME'", tok[0]);
            } else {
                int k;
                for (k = 0; k < K_COUNT && strcmp(tok[0], key_names[k]) != 0; k++)
                    ;
                if (k == K_COUNT)
                    rc = bad(&c, "unknown key '%s': the keys are driver, student-file, entry, "
                                 "policy, public, hidden, performance, points, credit, curve, "
                                 "min-speedup, baseline, rounds, repeat, time-limit, "
                                 "forbid-symbol, forbid-source, plausible, ranks, launcher, "
                                 "stretch, judge, deadline, late, contest, resubmissions, end",
                             tok[0]);
                else if (seen[k] && !repeatable(k))
                    rc = bad(&c, "'%s' given twice in lab %s: keep one", key_names[k], lab->name);
                else {
                    seen[k] = 1;
                    rc = parse_key(&c, lab, k, tok, ntok);
                }
            }
        }
        free(line);
        if (rc != 0)
            return -1;
    }
    if (lab) {
        c.line = lab->line;
        return bad(&c, "lab %s: no 'end' before the end of the file: add 'end' after its last "
                       "line", lab->name);
    }
    if (kind.lab && r->nlabs == nlabs_before)
        return lk_fail(err, "%s: no block for lab %s: write 'lab %s', its keys (grader/rubric.txt "
                            "lists them), then 'end'", path, kind.lab, kind.lab);
    if (!kind.lab && !kind.course_only && r->nlabs == 0)
        return lk_fail(err, "%s: no lab described: add a block 'lab NAME' ... 'end'", path);
    return 0;
}

int gr_rubric_parse(const char *path, const char *text, gr_rubric *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    if (parse_text(path, text, (text_kind){NULL, 0}, r, err) != 0) {
        gr_rubric_free(r);
        return -1;
    }
    return 0;
}

/* Read @p path and parse it as @p kind into @p r; a missing optional file adds nothing. */
static int read_text(const char *path, text_kind kind, int optional, gr_rubric *r, lk_error *err)
{
    if (optional && !gr_exists(path))
        return 0;
    char *text = gr_read_file(path, 1 << 20, NULL, err);
    if (!text)
        return -1;
    int rc = parse_text(path, text, kind, r, err);
    free(text);
    return rc;
}

int gr_rubric_read(const char *path, gr_rubric *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    if (read_text(path, (text_kind){NULL, 0}, 0, r, err) != 0) {
        gr_rubric_free(r);
        return -1;
    }
    return 0;
}

/* A lab folder's rubric, KIT/labs/NAME/rubric, which must exist: the folder is a lab of the
   kit (it has a lab.h), and a lab without its block would go ungraded in silence. */
static int read_lab_text(const char *kit, const char *name, gr_rubric *r, lk_error *err)
{
    char *path = gr_strf("%s/labs/%s/rubric", kit, name);
    int rc = gr_exists(path)
                 ? read_text(path, (text_kind){name, 0}, 0, r, err)
                 : lk_fail(err, "%s: missing: every lab folder holds its rubric block: add the "
                                "file with 'lab %s', its keys (grader/rubric.txt lists them), "
                                "then 'end'", path, name);
    free(path);
    return rc;
}

int gr_rubric_read_kit(const char *kit, gr_rubric *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    char *course = gr_strf("%s/grader/rubric.txt", kit);
    int rc = read_text(course, (text_kind){NULL, 1}, 1, r, err);
    free(course);
    char **names;
    int n;
    gr_kit_labs(kit, &names, &n);
    for (int i = 0; i < n; i++) {
        if (rc == 0)
            rc = read_lab_text(kit, names[i], r, err);
        free(names[i]);
    }
    free(names);
    if (rc == 0 && r->nlabs == 0)
        rc = lk_fail(err, "%s/labs: no lab folder (labs/NN-name/lab.h): nothing to grade", kit);
    if (rc != 0)
        gr_rubric_free(r);
    return rc;
}

int gr_rubric_read_lab(const char *kit, const char *name, gr_rubric *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    int rc = read_lab_text(kit, name, r, err);
    if (rc != 0)
        gr_rubric_free(r);
    return rc;
}

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void gr_kit_labs(const char *kit, char ***names, int *n)
{
    char *dir = gr_strf("%s/labs", kit);
    DIR *d = opendir(dir);
    *names = NULL;
    *n = 0;
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            const char *s = e->d_name;
            if (!(s[0] >= '0' && s[0] <= '9' && s[1] >= '0' && s[1] <= '9' && s[2] == '-'))
                continue;
            char *h = gr_strf("%s/%s/lab.h", dir, s);
            if (gr_exists(h)) {
                *names = gr_xrealloc(*names, (*n + 1) * sizeof **names);
                (*names)[(*n)++] = gr_xstrdup(s);
            }
            free(h);
        }
        closedir(d);
    }
    free(dir);
    qsort(*names, *n, sizeof **names, cmp_name);
}

const gr_lab_rubric *gr_rubric_find(const gr_rubric *r, const char *name)
{
    for (int i = 0; i < r->nlabs; i++)
        if (strcmp(r->labs[i].name, name) == 0)
            return &r->labs[i];
    return NULL;
}

void gr_rubric_free(gr_rubric *r)
{
    for (int i = 0; i < r->nlabs; i++) {
        free(r->labs[i].datasets);
        free(r->labs[i].stretch);
    }
    free(r->labs);
    memset(r, 0, sizeof *r);
}

int gr_symbol_matches(const char *pattern, const char *symbol)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*')
        return strncmp(pattern, symbol, n - 1) == 0;
    return strcmp(pattern, symbol) == 0;
}
