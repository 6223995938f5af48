#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "labkit/json.h"
#include "util.h"

void gr_csv_field(FILE *f, const char *s)
{
    if (!s)
        s = "";
    size_t n = strlen(s);
    int formula = n > 0 && strchr("=+-@", s[0]) != NULL;
    int quote = strpbrk(s, ",\"\r\n") != NULL || (n > 0 && (s[0] == ' ' || s[n - 1] == ' ')) ||
                formula;
    if (!quote) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    if (formula)
        fputc('\'', f);
    for (const char *p = s; *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
}

static const gr_lab_result *find_lab(const gr_student *st, const char *lab)
{
    for (int i = 0; i < st->nlabs; i++)
        if (st->labs[i].lab && strcmp(st->labs[i].lab, lab) == 0)
            return &st->labs[i];
    return NULL;
}

char *gr_student_status(const gr_student *st)
{
    if (!st->done)
        return gr_xstrdup("pending: not graded yet");
    gr_buf b = {0};
    for (int i = 0; i < st->nlabs; i++) {
        const gr_lab_result *r = &st->labs[i];
        if (!r->decided)
            gr_buf_printf(&b, "%s%s %s", b.len ? ", " : "incomplete: ", r->lab,
                          strcmp(r->outcome, GR_OUT_GPU_NOT_RUN) == 0 ? "(GPU stages not run)"
                                                                       : "(grader error)");
    }
    if (!b.len)
        gr_buf_puts(&b, "complete");
    return gr_buf_take(&b);
}

/* The GPU a student was graded on with --gpus (each worker grades whole students), from the
   results themselves: a contest's rewrite of the reports comes from another process. NULL:
   the session's one GPU. */
static const char *student_gpu(const gr_student *st)
{
    for (int l = 0; st && l < st->nlabs; l++)
        if (st->labs[l].gpu && !st->labs[l].reused)
            return st->labs[l].gpu;
    for (int l = 0; st && l < st->nlabs; l++)
        if (st->labs[l].gpu)
            return st->labs[l].gpu;
    return NULL;
}

int gr_write_gradebook(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    /* A class graded with --gpus has a last column with each student's GPU. */
    int gpus = 0;
    for (int i = 0; i < n; i++)
        gpus |= student_gpu(&st[i]) != NULL;
    fputs("student", f);
    for (int l = 0; l < c->nlabs; l++) {
        fputc(',', f);
        gr_csv_field(f, c->labs[l]->name);
    }
    fputs(gpus ? ",total,max,status,gpu\n" : ",total,max,status\n", f);
    for (int i = 0; i < n; i++) {
        gr_csv_field(f, st[i].name);
        double total, max;
        int decided;
        gr_student_total(&st[i], &total, &max, &decided);
        for (int l = 0; l < c->nlabs; l++) {
            const gr_lab_result *r = st[i].done ? find_lab(&st[i], c->labs[l]->name) : NULL;
            fputc(',', f);
            /* Not gradable is no graded 0: the instructor decides what it is worth. */
            if (r && r->decided && gr_lab_not_gradable(r))
                fputs("not gradable", f);
            else if (r && r->decided)
                fprintf(f, "%.2f", r->score);
        }
        fputc(',', f);
        if (decided)
            fprintf(f, "%.2f", total);
        double full = 0;
        for (int l = 0; l < c->nlabs; l++)
            full += c->labs[l]->points_correct + c->labs[l]->points_perf;
        fprintf(f, ",%.2f,", full);
        char *status = gr_student_status(&st[i]);
        gr_csv_field(f, status);
        free(status);
        if (gpus) {
            fputc(',', f);
            gr_csv_field(f, student_gpu(&st[i]) ? student_gpu(&st[i]) : "");
        }
        fputc('\n', f);
    }
    return 0;
}

/* Text for a Markdown table cell: one line, pipes and HTML escaped. */
static void md_cell(FILE *f, const char *s)
{
    for (const char *p = s ? s : ""; *p; p++) {
        switch (*p) {
        case '|': fputs("\\|", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '&': fputs("&amp;", f); break;
        case '\n':
        case '\r':
        case '\t': fputc(' ', f); break;
        default: fputc(*p, f);
        }
    }
}

/* A fenced block that no backtick run inside @p s can close. */
static void md_code(FILE *f, const char *s)
{
    int longest = 0, run = 0;
    for (const char *p = s; *p; p++) {
        run = *p == '`' ? run + 1 : 0;
        if (run > longest)
            longest = run;
    }
    int fence = longest >= 3 ? longest + 1 : 3;
    for (int i = 0; i < fence; i++)
        fputc('`', f);
    fputs("text\n", f);
    fputs(s, f);
    if (s[0] && s[strlen(s) - 1] != '\n')
        fputc('\n', f);
    for (int i = 0; i < fence; i++)
        fputc('`', f);
    fputc('\n', f);
}

static void score_text(char *buf, size_t size, const gr_lab_result *r)
{
    if (r->decided)
        snprintf(buf, size, "%.2f / %g", r->score, r->max);
    else
        snprintf(buf, size, "- / %g", r->max);
}

/* Grading without the sandbox is the instructor's explicit choice: every report says so. */
static void unsandboxed_note(FILE *f, const gr_report_ctx *c)
{
    if (c->env->unsandboxed) {
        fputs("> **UNSANDBOXED**: ", f);
        md_cell(f, c->env->isolation);
        fputs(".\n\n", f);
    }
}

static void md_environment(FILE *f, const gr_report_ctx *c, const gr_student *st)
{
    const gr_env *e = c->env;
    const char *gpu = student_gpu(st);
    fprintf(f, "## Environment\n\n");
    fprintf(f, "- GPU: ");
    md_cell(f, gpu ? gpu : e->gpu_ok ? e->gpu : e->gpu_reason);
    fprintf(f, "\n- CUDA toolkit: ");
    md_cell(f, e->cuda);
    fprintf(f, "\n- host: ");
    md_cell(f, e->host);
    fprintf(f, "\n- date: %s\n- kit version: ", e->date);
    md_cell(f, e->kit_version);
    fprintf(f, "\n- grader: labkit-grade %s, run by ", GR_GRADER_VERSION);
    md_cell(f, e->user);
    fprintf(f, "\n- isolation of student code: ");
    md_cell(f, e->isolation);
    fprintf(f, "\n- hidden datasets: seeded per session, the seed kept in the instructor's "
               "log\n- submissions: ");
    md_cell(f, c->submissions);
    fprintf(f, "\n- rubric: ");
    md_cell(f, c->rubric);
    fputs("\n", f);
}

static void md_perf(FILE *f, const gr_perf *p)
{
    fprintf(f, "\nPerformance on `%s`, %d steps, %d rounds (student and solution on the same "
               "inputs, same GPU, same session):\n\n", p->dataset ? p->dataset : "?", p->steps, p->rounds);
    fputs("| measure | median | spread |\n|---|---|---|\n", f);
    fprintf(f, "| speedup vs serial | %.1fx | %.1fx - %.1fx |\n", p->score.speedup.median,
            p->score.speedup.lo, p->score.speedup.hi);
    if (p->baseline) {
        fputs("| speedup vs the given version (`--variant ", f);
        md_cell(f, p->baseline);
        fprintf(f, "`) | %.1fx | %.1fx - %.1fx |\n", p->score.vs_baseline.median,
                p->score.vs_baseline.lo, p->score.vs_baseline.hi);
    }
    if (p->have_solution)
        fprintf(f, "| speed relative to the solution | %.3f | %.3f - %.3f |\n",
                p->score.ratio.median, p->score.ratio.lo, p->score.ratio.hi);
    fputs("\nStudent GPU time of the steps per round (ms):", f);
    for (int i = 0; i < p->rounds; i++)
        fprintf(f, " %.3f", p->student_ms[i]);
    if (p->have_solution) {
        fputs("  \nSolution GPU time of the steps per round (ms):", f);
        for (int i = 0; i < p->rounds; i++)
            fprintf(f, " %.3f", p->solution_ms[i]);
    }
    fprintf(f, "  \nSerial reference: %.1f ms", p->serial_ms);
    if (p->extrapolated)
        fprintf(f, " (extrapolated from a %d-step run: a full serial run is too slow)",
                p->serial_steps);
    if (p->baseline) {
        fputs("  \nGiven version (`--variant ", f);
        md_cell(f, p->baseline);
        fprintf(f, "`): %.1f ms", p->baseline_ms);
        if (p->baseline_extrapolated)
            fprintf(f, " (extrapolated from a %d-step run)", p->baseline_steps);
        fputs("; the minimum speedup is judged against it", f);
    }
    fputs("  \n", f);
    if (p->timed) {
        fputs("Timed: ", f);
        md_cell(f, p->timed);
        fputs(".  \n", f);
    }
    if (p->score.inconclusive)
        fputs("\n**Inconclusive**: the measurements straddle a scoring threshold even after "
              "more rounds; the points come from the medians.\n", f);
    fputs("\n", f);
}

static void audit_score(char *buf, size_t size, int decided, double score, const char *outcome)
{
    if (decided)
        snprintf(buf, size, "%.2f (%s)", score, outcome);
    else
        snprintf(buf, size, "- (%s)", outcome);
}

/* The audit trail: every change of a saved grade, who made it, when and why. */
static void md_audit(FILE *f, const gr_student *st)
{
    if (!st->naudit)
        return;
    fputs("## Grade changes\n\n| date | by | lab | before | after | reason |\n"
          "|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < st->naudit; i++) {
        const gr_audit *a = &st->audit[i];
        char before[96], after[96];
        audit_score(before, sizeof before, a->old_decided, a->old_score, a->old_outcome);
        audit_score(after, sizeof after, a->new_decided, a->new_score, a->new_outcome);
        const char *cells[] = {a->when, a->who, a->lab, before, after, a->reason};
        for (size_t k = 0; k < sizeof cells / sizeof cells[0]; k++) {
            fputs(k ? " | " : "| ", f);
            md_cell(f, cells[k]);
        }
        fputs(" |\n", f);
    }
    fputs("\n", f);
}

int gr_write_student_md(FILE *f, const gr_report_ctx *c, const gr_student *st)
{
    fputs("# Grade report: ", f);
    md_cell(f, st->name);
    double total, max;
    int decided;
    gr_student_total(st, &total, &max, &decided);
    char *status = gr_student_status(st);
    if (decided)
        fprintf(f, "\n\n**Total: %.2f / %g**\n\n", total, max);
    else {
        fprintf(f, "\n\n**Total: not final** (%.2f / %g from the labs decided so far; ", total, max);
        md_cell(f, status);
        fputs(")\n\n", f);
    }
    free(status);
    unsandboxed_note(f, c);
    if (c->gpu_note) {
        fputs("> GPU stages were not run: ", f);
        md_cell(f, c->gpu_note);
        fputs(".\n\n", f);
    }
    fputs("| lab | outcome | score | summary |\n|---|---|---|---|\n", f);
    for (int i = 0; i < st->nlabs; i++) {
        const gr_lab_result *r = &st->labs[i];
        char score[64];
        score_text(score, sizeof score, r);
        fputs("| ", f);
        md_cell(f, r->lab);
        fputs(" | ", f);
        md_cell(f, r->outcome);
        fprintf(f, " | %s | ", score);
        md_cell(f, r->summary);
        fputs(" |\n", f);
    }
    for (int i = 0; i < st->nlabs; i++) {
        const gr_lab_result *r = &st->labs[i];
        char score[64];
        score_text(score, sizeof score, r);
        fprintf(f, "\n## %s: %s, %s\n\n", r->lab, r->outcome, score);
        md_cell(f, r->summary);
        /* An undecided lab has no points yet: its section says so, as its table row does. */
        if (r->decided)
            fprintf(f, "\n\nCorrectness %.2f, performance %.2f.", r->correctness,
                    r->performance);
        else
            fputs("\n\nCorrectness -, performance - (not final).", f);
        fprintf(f, " Graded %s%s", r->graded_at, r->reused ? " (reused: unchanged since)" : "");
        fputs(".\n\n| stage | check | result | reason | seconds |\n|---|---|---|---|---|\n", f);
        for (int k = 0; k < r->nchecks; k++) {
            const gr_check *ck = &r->checks[k];
            fputs("| ", f);
            md_cell(f, ck->stage);
            fputs(" | ", f);
            md_cell(f, ck->name);
            fprintf(f, " | %s%s%s | ", strcmp(ck->status, GR_PASS) ? "**" : "", ck->status,
                    strcmp(ck->status, GR_PASS) ? "**" : "");
            md_cell(f, ck->reason);
            if (ck->seconds > 0)
                fprintf(f, " | %.2f |\n", ck->seconds);
            else
                fputs(" | |\n", f);
        }
        if (r->perf.measured)
            md_perf(f, &r->perf);
        int details = 0;
        for (int k = 0; k < r->nchecks; k++) {
            const gr_check *ck = &r->checks[k];
            if (!ck->detail)
                continue;
            if (!details++)
                fputs("\n### Details\n", f);
            fputs("\n**", f);
            md_cell(f, ck->name);
            fputs("**\n\n", f);
            md_code(f, ck->detail);
        }
    }
    fputs("\n", f);
    md_audit(f, st);
    md_environment(f, c, st);
    return 0;
}

static void json_env(FILE *f, const gr_report_ctx *c, const gr_student *st)
{
    const gr_env *e = c->env;
    const char *gpu = student_gpu(st);
    fputs("{\"gpu\":", f);
    lk_json_string(f, gpu ? gpu : e->gpu_ok ? e->gpu : NULL);
    fputs(",\"gpu_missing_reason\":", f);
    lk_json_string(f, e->gpu_ok ? NULL : e->gpu_reason);
    fputs(",\"cuda\":", f);
    lk_json_string(f, e->cuda);
    fputs(",\"host\":", f);
    lk_json_string(f, e->host);
    fputs(",\"date\":", f);
    lk_json_string(f, e->date);
    fputs(",\"kit_version\":", f);
    lk_json_string(f, e->kit_version);
    fputs(",\"grader_version\":", f);
    lk_json_string(f, GR_GRADER_VERSION);
    fputs(",\"user\":", f);
    lk_json_string(f, e->user);
    fprintf(f, ",\"unsandboxed\":%s,\"isolation\":", e->unsandboxed ? "true" : "false");
    lk_json_string(f, e->isolation);
    fputs(",\"submissions\":", f);
    lk_json_string(f, c->submissions);
    fputs(",\"rubric\":", f);
    lk_json_string(f, c->rubric);
    fputs("}", f);
}

int gr_write_student_json(FILE *f, const gr_report_ctx *c, const gr_student *st)
{
    double total, max;
    int decided;
    gr_student_total(st, &total, &max, &decided);
    char *status = gr_student_status(st);
    fputs("{\"student\":", f);
    lk_json_string(f, st->name);
    fputs(",\"total\":", f);
    if (decided)
        lk_json_number(f, total);
    else
        fputs("null", f);
    fputs(",\"max\":", f);
    lk_json_number(f, max);
    fprintf(f, ",\"complete\":%s,\"status\":", decided ? "true" : "false");
    lk_json_string(f, status);
    free(status);
    fputs(",\"environment\":", f);
    json_env(f, c, st);
    fputs(",\"audit\":[", f);
    for (int i = 0; i < st->naudit; i++) {
        const gr_audit *a = &st->audit[i];
        const char *keys[] = {"when", "who", "lab", "reason", "old_outcome", "new_outcome"};
        const char *values[] = {a->when, a->who, a->lab, a->reason, a->old_outcome,
                                a->new_outcome};
        fputs(i ? ",{" : "{", f);
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            fputs(k ? "," : "", f);
            lk_json_string(f, keys[k]);
            fputc(':', f);
            lk_json_string(f, values[k]);
        }
        fputs(",\"old_score\":", f);
        if (a->old_decided)
            lk_json_number(f, a->old_score);
        else
            fputs("null", f);
        fputs(",\"new_score\":", f);
        if (a->new_decided)
            lk_json_number(f, a->new_score);
        else
            fputs("null", f);
        fputs("}", f);
    }
    fputs("],\"labs\":[", f);
    for (int i = 0; i < st->nlabs; i++) {
        if (i)
            fputc(',', f);
        gr_lab_write_json(f, &st->labs[i]);
    }
    fputs("]}\n", f);
    return 0;
}

int gr_write_summary(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    fprintf(f, "# Class summary\n\n%d student%s, graded %s. GPU: ", n, n == 1 ? "" : "s",
            c->env->date);
    md_cell(f, c->env->gpu_ok ? c->env->gpu : c->env->gpu_reason);
    fputs(". Hidden-dataset seed: in session.log.\n\n", f);
    unsandboxed_note(f, c);
    if (c->gpu_note) {
        fputs("> GPU stages were not run: ", f);
        md_cell(f, c->gpu_note);
        fputs(". Labs that built have no final score.\n\n", f);
    }
    fputs("## Scores per lab\n\nOver the labs handed in and decided (a missing lab is 0 in the "
          "gradebook, a not gradable one is `not gradable`: counted in its outcomes only).\n\n"
          "| lab | handed in, decided | mean | median | min | max | outcomes |\n"
          "|---|---|---|---|---|---|---|\n", f);
    for (int l = 0; l < c->nlabs; l++) {
        const gr_lab_rubric *lab = c->labs[l];
        double *v = gr_xcalloc(n ? n : 1, sizeof *v);
        int k = 0;
        static const char *const outcomes[] = {GR_OUT_CORRECT, GR_OUT_INCORRECT, GR_OUT_BUILD_FAILED,
                                               GR_OUT_REJECTED, GR_OUT_MISSING, GR_OUT_GPU_NOT_RUN,
                                               GR_OUT_ERROR, GR_OUT_SKELETON};
        enum { NOUTCOMES = sizeof outcomes / sizeof outcomes[0] };
        int counts[NOUTCOMES] = {0}, pending = 0;
        for (int i = 0; i < n; i++) {
            const gr_lab_result *r = st[i].done ? find_lab(&st[i], lab->name) : NULL;
            if (!r) {
                pending++;
                continue;
            }
            /* A missing or not gradable lab's 0 says nothing of the work handed in: the
               figures leave it out. */
            if (r->decided && strcmp(r->outcome, GR_OUT_MISSING) != 0 && !gr_lab_not_gradable(r))
                v[k++] = r->score;
            for (int o = 0; o < NOUTCOMES; o++)
                counts[o] += strcmp(r->outcome, outcomes[o]) == 0;
        }
        fputs("| ", f);
        md_cell(f, lab->name);
        fprintf(f, " | %d of %d |", k, n);
        if (k) {
            double sum = 0, lo = v[0], hi = v[0];
            for (int i = 0; i < k; i++) {
                sum += v[i];
                lo = fmin(lo, v[i]);
                hi = fmax(hi, v[i]);
            }
            gr_spread sp;
            gr_spread_of(v, k, &sp);
            fprintf(f, " %.2f | %.2f | %.2f | %.2f |", sum / k, sp.median, lo, hi);
        } else {
            fputs(" - | - | - | - |", f);
        }
        int any = 0;
        for (int o = 0; o < NOUTCOMES; o++)
            if (counts[o])
                fprintf(f, "%s %s %d", any++ ? "," : "", outcomes[o], counts[o]);
        if (pending)
            fprintf(f, "%s pending %d", any++ ? "," : "", pending);
        fputs(" |\n", f);
        free(v);
    }
    fputs("\n## Distribution (score as % of the lab's points; decided labs)\n\n| lab |", f);
    for (int b = 0; b < 10; b++)
        fprintf(f, " %d-%d%% |", b * 10, b == 9 ? 100 : b * 10 + 9);
    fputs("\n|---|", f);
    for (int b = 0; b < 10; b++)
        fputs("---|", f);
    fputs("\n", f);
    for (int l = 0; l < c->nlabs; l++) {
        const gr_lab_rubric *lab = c->labs[l];
        double max = lab->points_correct + lab->points_perf;
        int bins[10] = {0};
        for (int i = 0; i < n; i++) {
            const gr_lab_result *r = st[i].done ? find_lab(&st[i], lab->name) : NULL;
            if (r && r->decided && max > 0) {
                int b = (int)floor(10.0 * r->score / max);
                bins[b < 0 ? 0 : b > 9 ? 9 : b]++;
            }
        }
        fputs("| ", f);
        md_cell(f, lab->name);
        fputs(" |", f);
        for (int b = 0; b < 10; b++)
            fprintf(f, " %d |", bins[b]);
        fputs("\n", f);
    }
    fputs("\n## Students\n\n| student |", f);
    for (int l = 0; l < c->nlabs; l++) {
        fputc(' ', f);
        md_cell(f, c->labs[l]->name);
        fputs(" |", f);
    }
    fputs(" total | status |\n|---|", f);
    for (int l = 0; l < c->nlabs + 2; l++)
        fputs("---|", f);
    fputs("\n", f);
    for (int i = 0; i < n; i++) {
        fputs("| ", f);
        md_cell(f, st[i].name);
        fputs(" |", f);
        for (int l = 0; l < c->nlabs; l++) {
            const gr_lab_result *r = st[i].done ? find_lab(&st[i], c->labs[l]->name) : NULL;
            if (r && r->decided)
                fprintf(f, " %.2f (%s) |", r->score, r->outcome);
            else
                fprintf(f, " - (%s) |", r ? r->outcome : "pending");
        }
        double total, max;
        int decided;
        gr_student_total(&st[i], &total, &max, &decided);
        char *status = gr_student_status(&st[i]);
        if (decided)
            fprintf(f, " %.2f / %g | ", total, max);
        else
            fprintf(f, " - / %g | ", max);
        md_cell(f, status);
        fputs(" |\n", f);
        free(status);
    }
    return 0;
}

/* Length of the valid UTF-8 sequence at s (0 when invalid). */
static int utf8_len(const unsigned char *s)
{
    int n;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xe0) == 0xc0)
        n = 2;
    else if ((s[0] & 0xf0) == 0xe0)
        n = 3;
    else if ((s[0] & 0xf8) == 0xf0)
        n = 4;
    else
        return 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return n;
}

void gr_xml_escape(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&apos;", f); p++; continue;
        default: break;
        }
        if (*p < 0x20 && *p != '\n' && *p != '\t' && *p != '\r') {
            fputc('?', f); /* not allowed in XML 1.0 at all */
            p++;
            continue;
        }
        int n = utf8_len(p);
        if (n == 0) {
            fputc('?', f);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
}

int gr_write_junit(FILE *f, const gr_report_ctx *c, const gr_student *st, int n)
{
    int tests = 0, failures = 0, skipped = 0;
    for (int i = 0; i < n; i++)
        for (int l = 0; l < st[i].nlabs; l++)
            for (int k = 0; k < st[i].labs[l].nchecks; k++) {
                const char *s = st[i].labs[l].checks[k].status;
                tests++;
                failures += strcmp(s, GR_FAIL) == 0;
                skipped += strcmp(s, GR_NOT_RUN) == 0;
            }
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"labkit-grade\" "
               "tests=\"%d\" failures=\"%d\" skipped=\"%d\">\n", tests, failures, skipped);
    for (int i = 0; i < n; i++) {
        for (int l = 0; l < st[i].nlabs; l++) {
            const gr_lab_result *r = &st[i].labs[l];
            int t = r->nchecks, fl = 0, sk = 0;
            for (int k = 0; k < t; k++) {
                fl += strcmp(r->checks[k].status, GR_FAIL) == 0;
                sk += strcmp(r->checks[k].status, GR_NOT_RUN) == 0;
            }
            fputs("  <testsuite name=\"", f);
            gr_xml_escape(f, st[i].name);
            fputc('/', f);
            gr_xml_escape(f, r->lab);
            fprintf(f, "\" tests=\"%d\" failures=\"%d\" skipped=\"%d\" timestamp=\"", t, fl, sk);
            gr_xml_escape(f, r->graded_at);
            fputs("\">\n    <properties><property name=\"score\" value=\"", f);
            if (r->decided)
                fprintf(f, "%.2f", r->score);
            fprintf(f, "\"/><property name=\"max\" value=\"%g\"/><property name=\"outcome\" "
                       "value=\"", r->max);
            gr_xml_escape(f, r->outcome);
            fputs("\"/><property name=\"gpu\" value=\"", f);
            gr_xml_escape(f, c->env->gpu_ok ? c->env->gpu : c->env->gpu_reason);
            fputs("\"/></properties>\n", f);
            for (int k = 0; k < t; k++) {
                const gr_check *ck = &r->checks[k];
                fputs("    <testcase classname=\"", f);
                gr_xml_escape(f, st[i].name);
                fputc('.', f);
                gr_xml_escape(f, r->lab);
                fputc('.', f);
                gr_xml_escape(f, ck->stage);
                fputs("\" name=\"", f);
                gr_xml_escape(f, ck->name);
                fprintf(f, "\" time=\"%.3f\"", ck->seconds);
                if (strcmp(ck->status, GR_FAIL) == 0) {
                    fputs(">\n      <failure message=\"", f);
                    gr_xml_escape(f, ck->reason);
                    fputs("\">", f);
                    gr_xml_escape(f, ck->detail ? ck->detail : ck->reason);
                    fputs("</failure>\n    </testcase>\n", f);
                } else if (strcmp(ck->status, GR_NOT_RUN) == 0) {
                    fputs(">\n      <skipped message=\"", f);
                    gr_xml_escape(f, ck->reason);
                    fputs("\"/>\n    </testcase>\n", f);
                } else {
                    fputs(">\n      <system-out>", f);
                    gr_xml_escape(f, ck->reason);
                    fputs("</system-out>\n    </testcase>\n", f);
                }
            }
            fputs("  </testsuite>\n", f);
        }
    }
    fputs("</testsuites>\n", f);
    return 0;
}

/* One test of a Gradescope results.json; @p visibility is one of the spec's words. */
static void gs_test(FILE *f, int *first, const char *name, double score, double max,
                    int passed, const char *visibility, const char *output)
{
    fputs(*first ? "" : ",", f);
    *first = 0;
    fputs("{\"name\":", f);
    lk_json_string(f, name);
    fputs(",\"score\":", f);
    lk_json_number(f, score);
    fputs(",\"max_score\":", f);
    lk_json_number(f, max);
    fprintf(f, ",\"status\":\"%s\",\"visibility\":\"%s\",\"output\":",
            passed ? "passed" : "failed", visibility);
    lk_json_string(f, output);
    fputs("}", f);
}

/* A check on a hidden dataset: its name says so ("hidden KIND:ROWSxCOLS ..."). */
static int hidden_check(const gr_check *ck)
{
    return strncmp(ck->name, "hidden ", 7) == 0 || strstr(ck->name, "(hidden seed)") != NULL;
}

static int has_hidden_datasets(const gr_lab_rubric *lab)
{
    for (int i = 0; lab && i < lab->ndatasets; i++)
        if (lab->datasets[i].hidden)
            return 1;
    return 0;
}

int gr_write_gradescope(FILE *f, const gr_report_ctx *c, const gr_student *st)
{
    double total, max;
    int decided;
    gr_student_total(st, &total, &max, &decided);
    double seconds = 0;
    for (int i = 0; i < st->nlabs; i++)
        for (int k = 0; k < st->labs[i].nchecks; k++)
            seconds += st->labs[i].checks[k].seconds;
    fputs("{\"score\":", f);
    lk_json_number(f, total);
    fprintf(f, ",\"execution_time\":%.0f,\"output\":", seconds);
    char *status = gr_student_status(st);
    char *out = gr_strf("%s%s%s", status, c->gpu_note ? "; GPU stages not run: " : "",
                        c->gpu_note ? c->gpu_note : "");
    lk_json_string(f, out);
    free(out);
    free(status);
    fputs(",\"tests\":[", f);
    int first = 1;
    for (int i = 0; i < st->nlabs; i++) {
        const gr_lab_result *r = &st->labs[i];
        const gr_lab_rubric *lab = NULL;
        for (int l = 0; l < c->nlabs; l++)
            if (strcmp(c->labs[l]->name, r->lab) == 0)
                lab = c->labs[l];
        double cmax = lab ? lab->points_correct : r->max, pmax = lab ? lab->points_perf : 0;
        /* The points depend on the hidden datasets (performance is timed only when they
           pass): shown once the instructor publishes the grades; the public checks at once. */
        const char *scored = has_hidden_datasets(lab) ? "after_published" : "visible";
        const char *heading = gr_lab_not_gradable(r) ? "not gradable, " : "";
        /* The public checks alone, without the outcome and summary, which may tell of a
           hidden dataset (`incorrect`, its name). */
        gr_buf details = {0};
        gr_buf_puts(&details, heading);
        for (int k = 0; k < r->nchecks; k++)
            if (strcmp(r->checks[k].stage, "performance") != 0 && !hidden_check(&r->checks[k]))
                gr_buf_printf(&details, "[%s] %s: %s\n", r->checks[k].status, r->checks[k].name,
                              r->checks[k].reason);
        int public_passed = 1;
        for (int k = 0; k < r->nchecks; k++)
            if (strcmp(r->checks[k].stage, "performance") != 0 &&
                strcmp(r->checks[k].stage, "policy") != 0 && !hidden_check(&r->checks[k]))
                public_passed &= strcmp(r->checks[k].status, GR_FAIL) != 0;
        char *name = gr_strf("%s: build and public datasets", r->lab);
        gs_test(f, &first, name, 0, 0, r->decided && public_passed && !gr_lab_not_gradable(r),
                "visible", gr_buf_str(&details));
        free(name);
        gr_buf_free(&details);
        gr_buf_printf(&details, "%s%s: %s\n", heading, r->outcome, r->summary);
        for (int k = 0; k < r->nchecks; k++)
            if (strcmp(r->checks[k].stage, "performance") != 0)
                gr_buf_printf(&details, "[%s] %s: %s\n", r->checks[k].status, r->checks[k].name,
                              r->checks[k].reason);
        name = gr_strf("%s: correctness", r->lab);
        gs_test(f, &first, name, r->correctness, cmax, r->decided && r->correctness >= cmax,
                scored, gr_buf_str(&details));
        free(name);
        gr_buf_free(&details);
        for (int k = 0; k < r->nchecks; k++)
            if (strcmp(r->checks[k].stage, "performance") == 0)
                gr_buf_printf(&details, "[%s] %s: %s\n", r->checks[k].status, r->checks[k].name,
                              r->checks[k].reason);
        name = gr_strf("%s: performance", r->lab);
        gs_test(f, &first, name, r->performance, pmax, r->decided && r->performance >= pmax,
                scored, gr_buf_str(&details));
        free(name);
        gr_buf_free(&details);
    }
    /* The leaderboard (shown where the assignment enables it): speed against the solution. */
    fputs("],\"leaderboard\":[", f);
    int entries = 0;
    for (int i = 0; i < st->nlabs; i++) {
        const gr_perf *p = &st->labs[i].perf;
        if (!p->measured || !p->have_solution || p->implausible)
            continue;
        char *name = gr_strf("%s: speed vs solution", st->labs[i].lab);
        fputs(entries++ ? ",{\"name\":" : "{\"name\":", f);
        lk_json_string(f, name);
        fputs(",\"value\":", f);
        lk_json_number(f, p->score.ratio.median);
        fputs(",\"order\":\"desc\"}", f);
        free(name);
    }
    fputs("],\"extra_data\":{\"environment\":", f);
    json_env(f, c, st);
    fputs(",\"not_gradable\":[", f);
    int ng = 0;
    for (int i = 0; i < st->nlabs; i++)
        if (gr_lab_not_gradable(&st->labs[i])) {
            fputs(ng++ ? "," : "", f);
            lk_json_string(f, st->labs[i].lab);
        }
    fputs("]}}\n", f);
    return 0;
}
