#include "result.h"

#include <errno.h>
#include <fcntl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"
#include "labkit/json.h"
#include "util.h"

static char *dup_or_null(const char *s)
{
    return s ? gr_xstrdup(s) : NULL;
}

void gr_lab_init(gr_lab_result *r, const char *lab, double max)
{
    memset(r, 0, sizeof *r);
    r->lab = gr_xstrdup(lab);
    r->outcome = gr_xstrdup(GR_OUT_ERROR);
    r->summary = gr_xstrdup("not graded");
    r->max = max;
    r->key = gr_xstrdup("");
    r->files_md5 = gr_xstrdup("");
    r->seed = gr_xstrdup("");
    char now[32];
    gr_utc_now(now, sizeof now);
    r->graded_at = gr_xstrdup(now);
}

void gr_lab_drop_checks(gr_lab_result *r, int keep)
{
    for (int i = keep; i < r->nchecks; i++) {
        gr_check *c = &r->checks[i];
        free(c->stage);
        free(c->name);
        free(c->status);
        free(c->reason);
        free(c->detail);
    }
    if (keep < r->nchecks)
        r->nchecks = keep;
}

void gr_perf_clear(gr_perf *p)
{
    free(p->dataset);
    free(p->timed);
    free(p->baseline);
    free(p->student_ms);
    free(p->solution_ms);
    memset(p, 0, sizeof *p);
}

void gr_lab_free(gr_lab_result *r)
{
    gr_lab_drop_checks(r, 0);
    free(r->checks);
    free(r->lab);
    free(r->outcome);
    free(r->summary);
    free(r->key);
    free(r->files_md5);
    free(r->graded_at);
    free(r->gpu);
    free(r->seed);
    gr_perf_clear(&r->perf);
    memset(r, 0, sizeof *r);
}

gr_check *gr_lab_add(gr_lab_result *r, const char *stage, const char *name, const char *status,
                     const char *reason, const char *detail)
{
    r->checks = gr_xrealloc(r->checks, (r->nchecks + 1) * sizeof *r->checks);
    gr_check *c = &r->checks[r->nchecks++];
    c->stage = gr_xstrdup(stage);
    c->name = gr_xstrdup(name);
    c->status = gr_xstrdup(status);
    c->reason = gr_xstrdup(reason ? reason : "");
    c->detail = detail && *detail ? gr_xstrdup(detail) : NULL;
    c->seconds = 0;
    return c;
}

void gr_lab_outcome(gr_lab_result *r, const char *outcome, const char *fmt, ...)
{
    free(r->outcome);
    r->outcome = gr_xstrdup(outcome);
    gr_buf b = {0};
    va_list ap;
    va_start(ap, fmt);
    char line[1024];
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    gr_buf_puts(&b, line);
    free(r->summary);
    r->summary = gr_buf_take(&b);
}

int gr_lab_not_gradable(const gr_lab_result *r)
{
    return r->outcome && (strcmp(r->outcome, GR_OUT_BUILD_FAILED) == 0 ||
                          strcmp(r->outcome, GR_OUT_SKELETON) == 0);
}

void gr_student_total(const gr_student *s, double *score, double *max, int *decided)
{
    *score = 0;
    *max = 0;
    *decided = s->done;
    for (int i = 0; i < s->nlabs; i++) {
        *max += s->labs[i].max;
        if (s->labs[i].decided)
            *score += s->labs[i].score;
        else
            *decided = 0;
    }
}

static void key_string(FILE *f, const char *key, const char *value, int comma)
{
    if (comma)
        fputc(',', f);
    lk_json_string(f, key);
    fputc(':', f);
    lk_json_string(f, value);
}

static void key_number(FILE *f, const char *key, double value)
{
    fputc(',', f);
    lk_json_string(f, key);
    fputc(':', f);
    lk_json_number(f, value);
}

static void write_spread(FILE *f, const char *key, const gr_spread *s)
{
    fputc(',', f);
    lk_json_string(f, key);
    fputs(":{\"median\":", f);
    lk_json_number(f, s->median);
    fputs(",\"lo\":", f);
    lk_json_number(f, s->lo);
    fputs(",\"hi\":", f);
    lk_json_number(f, s->hi);
    fprintf(f, ",\"n\":%d}", s->n);
}

static void write_array(FILE *f, const char *key, const double *v, int n)
{
    fputc(',', f);
    lk_json_string(f, key);
    fputs(":[", f);
    for (int i = 0; v && i < n; i++) {
        if (i)
            fputc(',', f);
        lk_json_number(f, v[i]);
    }
    fputc(']', f);
}

void gr_lab_write_json(FILE *f, const gr_lab_result *r)
{
    fputc('{', f);
    key_string(f, "lab", r->lab, 0);
    key_string(f, "outcome", r->outcome, 1);
    key_string(f, "summary", r->summary, 1);
    fprintf(f, ",\"decided\":%s", r->decided ? "true" : "false");
    key_number(f, "score", r->score);
    key_number(f, "max", r->max);
    key_number(f, "correctness", r->correctness);
    key_number(f, "performance", r->performance);
    key_string(f, "key", r->key, 1);
    key_string(f, "files_md5", r->files_md5, 1);
    key_string(f, "graded_at", r->graded_at, 1);
    if (r->gpu) /* only with --gpus: a result of one GPU as before */
        key_string(f, "gpu", r->gpu, 1);
    fputs(",\"checks\":[", f);
    for (int i = 0; i < r->nchecks; i++) {
        const gr_check *c = &r->checks[i];
        fputs(i ? ",{" : "{", f);
        key_string(f, "stage", c->stage, 0);
        key_string(f, "name", c->name, 1);
        key_string(f, "status", c->status, 1);
        key_string(f, "reason", c->reason, 1);
        key_string(f, "detail", c->detail, 1);
        key_number(f, "seconds", c->seconds);
        fputc('}', f);
    }
    fputc(']', f);
    const gr_perf *p = &r->perf;
    fprintf(f, ",\"performance_measurement\":{\"measured\":%s", p->measured ? "true" : "false");
    if (p->measured) {
        key_string(f, "dataset", p->dataset, 1);
        fprintf(f, ",\"steps\":%d,\"rounds\":%d", p->steps, p->rounds);
        write_array(f, "student_ms", p->student_ms, p->rounds);
        write_array(f, "solution_ms", p->solution_ms, p->have_solution ? p->rounds : 0);
        key_number(f, "serial_ms", p->serial_ms);
        fprintf(f, ",\"serial_steps\":%d,\"serial_extrapolated\":%s,\"have_solution\":%s",
                p->serial_steps, p->extrapolated ? "true" : "false",
                p->have_solution ? "true" : "false");
        write_spread(f, "ratio_to_solution", &p->score.ratio);
        write_spread(f, "speedup_vs_serial", &p->score.speedup);
        fprintf(f, ",\"implausible\":%s", p->implausible ? "true" : "false");
        key_number(f, "plausible_bound_ms", p->bound_ms);
        key_number(f, "copy_GBps", p->copy_GBps);
        key_number(f, "overhead_ms", p->overhead_ms);
        key_string(f, "timed", p->timed, 1);
        fputs(",\"baseline\":", f);
        lk_json_string(f, p->baseline);
        if (p->baseline) {
            key_number(f, "baseline_ms", p->baseline_ms);
            fprintf(f, ",\"baseline_steps\":%d,\"baseline_extrapolated\":%s", p->baseline_steps,
                    p->baseline_extrapolated ? "true" : "false");
            write_spread(f, "speedup_vs_baseline", &p->score.vs_baseline);
        }
        key_number(f, "points", p->score.points);
        fprintf(f, ",\"inconclusive\":%s", p->score.inconclusive ? "true" : "false");
        key_string(f, "reason", p->score.reason, 1);
    }
    fputs("}}", f);
}

static char *take_str(const gr_json *j, const char *key, const char *dflt)
{
    const char *s = gr_json_str(j, key);
    return gr_xstrdup(s ? s : dflt);
}

static double *read_array(const gr_json *j, const char *key, int n)
{
    const gr_json *a = gr_json_get(j, key);
    if (!a || !cJSON_IsArray(a) || gr_json_count(a) != n || n == 0)
        return NULL;
    double *v = gr_xcalloc(n, sizeof *v);
    int i = 0;
    for (const gr_json *c = a->child; c; c = c->next)
        v[i++] = cJSON_IsNumber(c) ? c->valuedouble : 0.0;
    return v;
}

static void read_spread(const gr_json *j, const char *key, gr_spread *s)
{
    const gr_json *o = gr_json_get(j, key);
    s->median = gr_json_num(o, "median", 0);
    s->lo = gr_json_num(o, "lo", 0);
    s->hi = gr_json_num(o, "hi", 0);
    s->n = (int)gr_json_num(o, "n", 0);
}

int gr_lab_from_json(const gr_json *j, gr_lab_result *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    if (!j || !cJSON_IsObject(j) || !gr_json_str(j, "lab") || !gr_json_str(j, "outcome"))
        return lk_fail(err, "not a lab result: no lab or outcome");
    const gr_json *checks = gr_json_get(j, "checks");
    if (!checks || !cJSON_IsArray(checks))
        return lk_fail(err, "lab result without a checks array");
    r->lab = take_str(j, "lab", "");
    r->outcome = take_str(j, "outcome", GR_OUT_ERROR);
    r->summary = take_str(j, "summary", "");
    r->decided = gr_json_true(j, "decided");
    r->score = gr_json_num(j, "score", 0);
    r->max = gr_json_num(j, "max", 0);
    r->correctness = gr_json_num(j, "correctness", 0);
    r->performance = gr_json_num(j, "performance", 0);
    r->key = take_str(j, "key", "");
    r->files_md5 = take_str(j, "files_md5", "");
    r->graded_at = take_str(j, "graded_at", "");
    r->gpu = gr_json_str(j, "gpu") ? take_str(j, "gpu", "") : NULL;
    r->seed = take_str(j, "seed", "");
    for (const gr_json *c = checks->child; c; c = c->next) {
        gr_check *k = gr_lab_add(r, gr_json_str(c, "stage") ? gr_json_str(c, "stage") : "",
                                 gr_json_str(c, "name") ? gr_json_str(c, "name") : "",
                                 gr_json_str(c, "status") ? gr_json_str(c, "status") : GR_FAIL,
                                 gr_json_str(c, "reason"), gr_json_str(c, "detail"));
        k->seconds = gr_json_num(c, "seconds", 0);
    }
    const gr_json *p = gr_json_get(j, "performance_measurement");
    gr_perf *perf = &r->perf;
    perf->measured = gr_json_true(p, "measured");
    if (perf->measured) {
        perf->dataset = dup_or_null(gr_json_str(p, "dataset"));
        perf->steps = (int)gr_json_num(p, "steps", 0);
        perf->rounds = (int)gr_json_num(p, "rounds", 0);
        perf->have_solution = gr_json_true(p, "have_solution");
        perf->student_ms = read_array(p, "student_ms", perf->rounds);
        perf->solution_ms = perf->have_solution ? read_array(p, "solution_ms", perf->rounds) : NULL;
        perf->serial_ms = gr_json_num(p, "serial_ms", 0);
        perf->serial_steps = (int)gr_json_num(p, "serial_steps", 0);
        perf->extrapolated = gr_json_true(p, "serial_extrapolated");
        read_spread(p, "ratio_to_solution", &perf->score.ratio);
        read_spread(p, "speedup_vs_serial", &perf->score.speedup);
        perf->implausible = gr_json_true(p, "implausible");
        perf->bound_ms = gr_json_num(p, "plausible_bound_ms", 0);
        perf->copy_GBps = gr_json_num(p, "copy_GBps", 0);
        perf->overhead_ms = gr_json_num(p, "overhead_ms", 0);
        perf->timed = dup_or_null(gr_json_str(p, "timed"));
        perf->baseline = dup_or_null(gr_json_str(p, "baseline"));
        if (perf->baseline) {
            perf->baseline_ms = gr_json_num(p, "baseline_ms", 0);
            perf->baseline_steps = (int)gr_json_num(p, "baseline_steps", 0);
            perf->baseline_extrapolated = gr_json_true(p, "baseline_extrapolated");
            read_spread(p, "speedup_vs_baseline", &perf->score.vs_baseline);
        }
        perf->score.points = gr_json_num(p, "points", 0);
        perf->score.inconclusive = gr_json_true(p, "inconclusive");
        snprintf(perf->score.reason, sizeof perf->score.reason, "%s",
                 gr_json_str(p, "reason") ? gr_json_str(p, "reason") : "");
        if (!perf->student_ms || (perf->have_solution && !perf->solution_ms)) {
            gr_lab_free(r);
            return lk_fail(err, "lab result: performance rounds do not match their count");
        }
    }
    return 0;
}

int gr_lab_load(const char *path, gr_lab_result *r, lk_error *err)
{
    memset(r, 0, sizeof *r);
    char *text = gr_read_file(path, 64 << 20, NULL, err);
    if (!text)
        return -1;
    gr_json *j = gr_json_parse(text, path, err);
    free(text);
    if (!j)
        return -1;
    int rc = gr_lab_from_json(j, r, err);
    gr_json_free(j);
    return rc;
}

static int write_lab(FILE *f, void *ctx, lk_error *err)
{
    (void)err;
    gr_lab_write_json(f, ctx);
    fputc('\n', f);
    return 0;
}

int gr_lab_save(const char *path, const gr_lab_result *r, lk_error *err)
{
    return gr_write_atomic(path, write_lab, (void *)r, err);
}

/* ---- sealed results: an HMAC under the grader's own secret ----------------------------- */

#define SEAL_HEAD ",\"seal\":\""
#define SEAL_TAIL "\"}\n"
#define SEAL_HEX 64

/* The seal of @p body: HMAC-SHA256 of a tag naming the format, then the body. */
static int seal_of(const unsigned char *secret, const char *body, size_t len,
                   char hex[SEAL_HEX + 1])
{
    static const char tag[] = "labkit-grade sealed lab result 1\n";
    char *msg = gr_xmalloc(sizeof tag - 1 + len);
    memcpy(msg, tag, sizeof tag - 1);
    memcpy(msg + sizeof tag - 1, body, len);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    int ok = HMAC(EVP_sha256(), secret, GR_SECRET_BYTES, (const unsigned char *)msg,
                  sizeof tag - 1 + len, mac, &n) != NULL && n * 2 == SEAL_HEX;
    free(msg);
    for (unsigned int i = 0; ok && i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", mac[i]);
    OPENSSL_cleanse(mac, sizeof mac);
    return ok ? 0 : -1;
}

typedef struct sealed_text {
    const char *body; /* the result's JSON object */
    size_t len;
    const char *seal;
} sealed_text;

/* The object without its closing brace, then the seal as its last member. */
static int write_sealed(FILE *f, void *ctx, lk_error *err)
{
    (void)err;
    const sealed_text *t = ctx;
    fwrite(t->body, 1, t->len - 1, f);
    fprintf(f, SEAL_HEAD "%s" SEAL_TAIL, t->seal);
    return 0;
}

int gr_lab_save_sealed(const char *path, const gr_lab_result *r, const unsigned char *secret,
                       lk_error *err)
{
    char *body = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&body, &len);
    if (!m)
        return lk_fail(err, "%s: out of memory sealing the result", path);
    gr_lab_write_json(m, r);
    fclose(m);
    char seal[SEAL_HEX + 1];
    int rc = len > 1 && body[len - 1] == '}' && seal_of(secret, body, len, seal) == 0
                 ? 0 : lk_fail(err, "%s: cannot seal the result (HMAC-SHA256 failed)", path);
    sealed_text t = {body, len, seal};
    if (rc == 0)
        rc = gr_write_atomic(path, write_sealed, &t, err);
    free(body);
    return rc;
}

/* The body a sealed file @p text was made from (its seal member removed), and its seal; NULL
   when the text does not end as gr_lab_save_sealed() ends it. */
static char *unseal(const char *text, size_t len, char seal[SEAL_HEX + 1], size_t *body_len)
{
    const size_t head = strlen(SEAL_HEAD), tail = strlen(SEAL_TAIL);
    if (len < head + SEAL_HEX + tail + 1)
        return NULL;
    const char *at = text + len - tail - SEAL_HEX - head;
    if (memcmp(at, SEAL_HEAD, head) != 0 || memcmp(text + len - tail, SEAL_TAIL, tail) != 0 ||
        strspn(at + head, "0123456789abcdef") < SEAL_HEX)
        return NULL;
    memcpy(seal, at + head, SEAL_HEX);
    seal[SEAL_HEX] = '\0';
    *body_len = (size_t)(at - text) + 1;
    char *body = gr_xmalloc(*body_len + 1);
    memcpy(body, text, *body_len - 1);
    body[*body_len - 1] = '}';
    body[*body_len] = '\0';
    return body;
}

int gr_lab_load_sealed(const char *path, gr_lab_result *r, const unsigned char *secret,
                       lk_error *err)
{
    memset(r, 0, sizeof *r);
    size_t len, body_len = 0;
    char *text = gr_read_regular(path, 64 << 20, &len, err);
    if (!text)
        return -1;
    char seal[SEAL_HEX + 1], want[SEAL_HEX + 1];
    char *body = unseal(text, len, seal, &body_len);
    free(text);
    if (!body || seal_of(secret, body, body_len, want) != 0 ||
        CRYPTO_memcmp(seal, want, SEAL_HEX) != 0) {
        free(body);
        return lk_fail(err, "%s: not sealed by this grader (no seal, or one that does not "
                            "hold)", path);
    }
    gr_json *j = gr_json_parse(body, path, err);
    free(body);
    if (!j)
        return -1;
    int rc = gr_lab_from_json(j, r, err);
    gr_json_free(j);
    return rc;
}

/* Replace *text by its redacted form. */
static void redact(char **text, unsigned long long seed)
{
    if (*text) {
        char *clean = gr_redact_seed(*text, seed);
        free(*text);
        *text = clean;
    }
}

void gr_lab_redact(gr_lab_result *r, unsigned long long seed)
{
    redact(&r->summary, seed);
    for (int i = 0; i < r->nchecks; i++) {
        redact(&r->checks[i].name, seed);
        redact(&r->checks[i].reason, seed);
        redact(&r->checks[i].detail, seed);
    }
    redact(&r->perf.dataset, seed);
    redact(&r->perf.timed, seed);
    char *reason = gr_redact_seed(r->perf.score.reason, seed);
    snprintf(r->perf.score.reason, sizeof r->perf.score.reason, "%s", reason);
    free(reason);
}

/* ---- the audit trail of grade changes ---------------------------------------------------- */

int gr_audit_append(const char *path, const gr_audit *a, lk_error *err)
{
    char *line = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&line, &len);
    if (!m)
        return lk_fail(err, "%s: out of memory", path);
    fputs("{", m);
    key_string(m, "when", a->when, 0);
    key_string(m, "who", a->who, 1);
    key_string(m, "lab", a->lab, 1);
    key_string(m, "reason", a->reason, 1);
    key_string(m, "old_outcome", a->old_outcome, 1);
    fputs(",\"old_score\":", m);
    if (a->old_decided)
        lk_json_number(m, a->old_score);
    else
        fputs("null", m);
    key_string(m, "new_outcome", a->new_outcome, 1);
    fputs(",\"new_score\":", m);
    if (a->new_decided)
        lk_json_number(m, a->new_score);
    else
        fputs("null", m);
    fputs("}\n", m);
    fclose(m);
    /* One write of one line with O_APPEND: entries are never interleaved or rewritten. */
    int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    int rc = 0;
    if (fd < 0)
        rc = lk_fail(err, "%s: cannot open the audit trail: %s", path, strerror(errno));
    else if (write(fd, line, len) != (ssize_t)len || fsync(fd) != 0)
        rc = lk_fail(err, "%s: cannot append to the audit trail: %s", path, strerror(errno));
    if (fd >= 0)
        close(fd);
    free(line);
    return rc;
}

int gr_audit_load(const char *path, gr_audit **out, int *n, lk_error *err)
{
    *out = NULL;
    *n = 0;
    if (!gr_exists(path))
        return 0;
    char *text = gr_read_regular(path, 16 << 20, NULL, err);
    if (!text)
        return -1;
    int rc = 0, line = 0;
    for (char *p = text, *next; rc == 0 && *p; p = next) {
        next = strchr(p, '\n');
        next = next ? (*next = '\0', next + 1) : p + strlen(p);
        line++;
        if (!*p)
            continue;
        char *where = gr_strf("%s:%d", path, line);
        gr_json *j = gr_json_parse(p, where, err);
        free(where);
        if (!j) {
            rc = -1;
            break;
        }
        *out = gr_xrealloc(*out, (*n + 1) * sizeof **out);
        gr_audit *a = &(*out)[(*n)++];
        a->when = take_str(j, "when", "");
        a->who = take_str(j, "who", "");
        a->lab = take_str(j, "lab", "");
        a->reason = take_str(j, "reason", "");
        a->old_outcome = take_str(j, "old_outcome", "");
        a->new_outcome = take_str(j, "new_outcome", "");
        const gr_json *old = gr_json_get(j, "old_score"), *now = gr_json_get(j, "new_score");
        a->old_decided = old && cJSON_IsNumber(old);
        a->old_score = a->old_decided ? old->valuedouble : 0;
        a->new_decided = now && cJSON_IsNumber(now);
        a->new_score = a->new_decided ? now->valuedouble : 0;
        gr_json_free(j);
    }
    free(text);
    if (rc != 0) {
        gr_audit_free(*out, *n);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

void gr_audit_free(gr_audit *a, int n)
{
    for (int i = 0; i < n; i++) {
        free(a[i].when);
        free(a[i].who);
        free(a[i].lab);
        free(a[i].reason);
        free(a[i].old_outcome);
        free(a[i].new_outcome);
    }
    free(a);
}
