/*
 * advice_modes.c: the advice rules grad_mode_in_inference and train_mode_in_inference
 * (docs/report.md, "Advice"): settings that make the answers wrong, autograd left on where the
 * program only runs forward, a model left in train() mode (dropout, batch statistics).
 */
#include "advice.h"
#include "../run/operators.h"

#include <stdio.h>
#include <string.h>

/* The no_grad or inference_mode phase to hold a grad phase against: the lowest p50 latency,
 * the same autocast preferred; without iterations, the lowest peak memory. */
static const struct phase_info *best_no_grad(const struct run_phases *p, const struct phase_info *g)
{
    const struct phase_info *best = NULL;
    for (int pass = 0; pass < 2 && !best; pass++)
        for (int i = 0; i < p->n; i++) {
            const struct phase_info *c = &p->v[i];
            if (!strcmp(c->grad_mode, "grad") || (!pass && strcmp(c->autocast, g->autocast)))
                continue;
            if (!best)
                best = c;
            else if (c->iterations && (!best->iterations || c->lat_p50 < best->lat_p50))
                best = c;
            else if (!c->iterations && !best->iterations && c->mem_dev >= 0 &&
                     (best->mem_dev < 0 || c->peak_alloc < best->peak_alloc))
                best = c;
        }
    return best;
}

static void rule_grad_mode(const struct advice_ctx *c, const struct phase_info *g,
                           struct advice_list *l)
{
    const struct run_phases *p = c->p;
    const struct names *k = &c->k[g - p->v];
    /* "No backward kernel" is evidence only where kernels were recorded: without CUDA activity
     * a training loop would look the same. */
    if (strcmp(g->grad_mode, "grad") || k->backward || !g->has_kernels || !g->kernels) return;
    const struct phase_info *n = best_no_grad(p, g);
    /* Evidence of inference: iterations in grad mode, or forward work also done without grad. */
    if (!g->iterations && !(k->forward && n)) return;
    struct advice *a = advice_add(l, "grad_mode_in_inference", g);
    if (!a) return;
    char gs[32], ns[32], b1[32], b2[32], b3[32];
    phase_short_label(g, gs, sizeof gs);
    if (g->iterations)
        snprintf(a->finding, sizeof a->finding,
                 "%s ran %lld %s with autograd recording and no backward kernel", gs,
                 (long long)g->iterations, advice_plural(g->iterations, "iteration", "iterations"));
    else
        snprintf(a->finding, sizeof a->finding,
                 "%s launched %lld GEMM, convolution or attention %s with autograd"
                 " recording and no backward kernel",
                 gs, (long long)k->forward, advice_plural(k->forward, "kernel", "kernels"));
    advice_ev_int(a, "iterations", g->iterations);
    advice_ev_int(a, "forward_kernels", k->forward);
    advice_ev_int(a, "backward_kernels", k->backward);
    if (!n) {
        advice_append(a->finding, sizeof a->finding,
                      "; no no_grad or inference_mode phase ran to"
                      " compare with.");
    } else {
        phase_short_label(n, ns, sizeof ns);
        advice_ev_text(a, "compared_with", n->label);
        const char *sep = ":";
        if (g->iterations && n->iterations && n->lat_p50 > 0) {
            advice_append(a->finding, sizeof a->finding,
                          "%s p50 latency %s against %s in %s (%.2fx)", sep,
                          advice_ns_text(b1, sizeof b1, (double)g->lat_p50),
                          advice_ns_text(b2, sizeof b2, (double)n->lat_p50), ns,
                          (double)g->lat_p50 / (double)n->lat_p50);
            advice_ev_int(a, "latency_p50_ns", g->lat_p50);
            advice_ev_int(a, "compared_latency_p50_ns", n->lat_p50);
            advice_ev_num(a, "latency_ratio", (double)g->lat_p50 / (double)n->lat_p50);
            if (g->lat_p50 > n->lat_p50) a->saving_ns = (g->lat_p50 - n->lat_p50) * g->iterations;
            sep = ",";
        }
        if (g->mem_dev >= 0 && n->mem_dev >= 0) {
            advice_append(a->finding, sizeof a->finding, "%s peak tensor memory %s against %s%s%s",
                          sep, advice_bytes_text(b1, sizeof b1, (double)g->peak_alloc),
                          advice_bytes_text(b2, sizeof b2, (double)n->peak_alloc),
                          *sep == ':' ? " in " : "", *sep == ':' ? ns : "");
            int64_t more; /* the phase table's saving (memory.c), where it gives one */
            double pct;
            if (memory_saving(g, n, &more, &pct) && more > 0) {
                advice_append(a->finding, sizeof a->finding, " (%s more)",
                              advice_bytes_text(b3, sizeof b3, (double)more));
                a->saving_bytes = more;
            }
            advice_ev_int(a, "peak_allocated_bytes", g->peak_alloc);
            advice_ev_int(a, "compared_peak_allocated_bytes", n->peak_alloc);
            advice_ev_int(a, "peak_allocated_more_bytes", g->peak_alloc - n->peak_alloc);
            sep = ",";
        }
        advice_append(a->finding, sizeof a->finding, "%s",
                      *sep == ':' ? " (no figure to compare)." : ".");
    }
    snprintf(a->try_, sizeof a->try_,
             "run inference under a c10::InferenceMode guard or torch::NoGradGuard"
             " (torch.inference_mode() in Python)");
}

/* The phase's first series named "... train()" by the Python module hooks, or NULL. */
static const struct series_info *train_series(const struct run_phases *p,
                                              const struct phase_info *ph)
{
    for (int i = 0; i < p->series.n; i++) {
        const struct series_info *se = &p->series.v[i];
        const char *t = strstr(se->name, " train()");
        if (&p->v[se->phase] == ph && t && (t[8] == 0 || t[8] == ' ')) return se;
    }
    return NULL;
}

/* The phase's operators (INFPROF_OPERATORS=1), or NULL. */
static const struct op_phase *ops_of(const struct advice_ctx *c, const struct phase_info *ph)
{
    const struct run_operators *r = run_operators(c->db, c->p);
    for (int i = 0; i < r->nphases; i++)
        if (r->phases[i].phase == ph->id) return &r->phases[i];
    return NULL;
}

/* The finding from the recorded operators alone (a CPU program); sampled, the counts are
 * estimates (operators.h). */
static void train_by_operators(struct advice *a, const char *s, const struct op_phase *o,
                               int sampled)
{
    const char *about = sampled ? "about " : "";
    snprintf(a->finding, sizeof a->finding,
             "%s ran training-mode layers without grad, by its"
             " PyTorch operators:",
             s);
    if (o->dropout_train)
        advice_append(a->finding, sizeof a->finding,
                      " dropout in its training form (%s%lld %s that drew a mask:"
                      " aten::bernoulli_ or aten::native_dropout)",
                      about, (long long)o->dropout_train,
                      advice_plural(o->dropout_train, "call", "calls"));
    if (o->bn_train)
        advice_append(a->finding, sizeof a->finding,
                      "%s batch-norm computing batch statistics (%s%lld"
                      " aten::_native_batch_norm_legit %s)",
                      o->dropout_train ? " and" : "", about, (long long)o->bn_train,
                      advice_plural(o->bn_train, "call", "calls"));
    advice_append(a->finding, sizeof a->finding, ": the model is in train() mode.");
}

static void rule_train_mode(const struct advice_ctx *c, const struct phase_info *ph,
                            struct advice_list *l)
{
    const struct names *k = &c->k[ph - c->p->v];
    const struct cudnn_findings *f = c->f;
    if (!strcmp(ph->grad_mode, "grad")) return;
    int64_t calls = ph->id >= 0 && ph->id < REPORT_MAX_PHASES ? f->bn_train_by_phase[ph->id] : 0;
    /* A Python model called in train() mode with dropout or batch-norm layers: its series is
     * named "... train()" by the module hooks (collectors/python), the evidence on a CPU; and
     * the operators in their training form where operators were recorded. */
    const struct series_info *py = train_series(c->p, ph);
    const struct op_phase *ops = ops_of(c, ph);
    int by_ops = ops && (ops->dropout_train || ops->bn_train);
    int gpu = calls || k->bn_train || k->dropout;
    if (!gpu && !py && !by_ops) return;
    struct advice *a = advice_add(l, "train_mode_in_inference", ph);
    if (!a) return;
    /* Which evidence fired, every one that did. */
    char ev[128] = "";
    if (calls) advice_append(ev, sizeof ev, "%scuDNN calls", ev[0] ? ", " : "");
    if (k->bn_train || k->dropout) advice_append(ev, sizeof ev, "%skernels", ev[0] ? ", " : "");
    if (by_ops) advice_append(ev, sizeof ev, "%soperators", ev[0] ? ", " : "");
    if (py) advice_append(ev, sizeof ev, "%sPython module hooks", ev[0] ? ", " : "");
    advice_ev_text(a, "found_by", ev);
    if (by_ops) {
        advice_ev_int(a, "dropout_training_operator_calls", ops->dropout_train);
        advice_ev_int(a, "bn_training_operator_calls", ops->bn_train);
    }
    char s[32], b1[32], b2[32];
    phase_short_label(ph, s, sizeof s);
    /* The model's own series names it best (Python); else the operators. */
    if (py && !gpu) {
        /* The layers the operators show in their training form; without operators, both kinds
         * the hooks look for, whichever the model has. */
        const char *what =
            by_ops && ops->dropout_train && !ops->bn_train
                ? "its dropout layers drop activations (their operators drew masks), and"
                  " batch-norm layers, if it has any, use each batch's statistics"
            : by_ops && ops->bn_train && !ops->dropout_train
                ? "its batch-norm layers use each batch's statistics (their operators computed"
                  " them), and dropout layers, if it has any, drop activations"
            : by_ops ? "its dropout layers drop activations and its batch-norm layers use each"
                       " batch's statistics (their operators show both)"
                     : "its dropout layers drop activations and its batch-norm layers use each"
                       " batch's statistics, whichever it has";
        snprintf(a->finding, sizeof a->finding,
                 "%s called %.200s in train() mode without grad (%lld %s): %s, so the outputs are"
                 " not the model's (found by: %s).",
                 s, py->name, (long long)py->iterations,
                 advice_plural(py->iterations, "call", "calls"), what, ev);
        advice_ev_text(a, "series", py->name);
        advice_ev_int(a, "train_mode_calls", py->iterations);
        snprintf(a->try_, sizeof a->try_, "call model.eval() before inference");
        return;
    }
    if (!gpu && by_ops) {
        train_by_operators(a, s, ops, run_operators(c->db, c->p)->sampled);
        snprintf(a->try_, sizeof a->try_,
                 "call module.eval() before inference (model.eval() in Python,"
                 " torch::nn::Module::eval(), torch::jit::Module::eval())");
        return;
    }
    snprintf(a->finding, sizeof a->finding, "%s ran training-mode layers without grad:", s);
    const char *sep = "";
    if (calls || k->bn_train) {
        advice_append(a->finding, sizeof a->finding,
                      " batch-norm computing batch statistics (%lld cuDNN training %s, %lld"
                      " statistics %s, %s)",
                      (long long)calls, advice_plural(calls, "call", "calls"),
                      (long long)k->bn_train, advice_plural(k->bn_train, "kernel", "kernels"),
                      advice_ns_text(b1, sizeof b1, (double)k->bn_train_ns));
        sep = " and";
    }
    if (k->dropout) {
        advice_append(a->finding, sizeof a->finding, "%s %lld dropout %s (%s)", sep,
                      (long long)k->dropout, advice_plural(k->dropout, "kernel", "kernels"),
                      advice_ns_text(b2, sizeof b2, (double)k->dropout_ns));
        a->saving_ns = k->dropout_ns;
    }
    advice_append(a->finding, sizeof a->finding, ": the model is in train() mode.");
    advice_ev_int(a, "cudnn_bn_training_calls", calls);
    advice_ev_int(a, "bn_statistics_kernels", k->bn_train);
    advice_ev_int(a, "bn_statistics_kernel_ns", k->bn_train_ns);
    advice_ev_int(a, "dropout_kernels", k->dropout);
    advice_ev_int(a, "dropout_kernel_ns", k->dropout_ns);
    snprintf(a->try_, sizeof a->try_,
             "call module.eval() before inference (torch::jit::Module::eval(),"
             " torch::nn::Module::eval())");
}

const struct advice_rule advice_rule_grad_mode = {
    "grad_mode_in_inference", 30, ADVICE_PHASE, rule_grad_mode,
    "a grad phase ran kernels, none of them backward, with iterations or beside a no_grad or"
    " inference_mode phase"};
const struct advice_rule advice_rule_train_mode = {
    "train_mode_in_inference", 20, ADVICE_PHASE, rule_train_mode,
    "a no_grad or inference_mode phase ran batch-norm training or dropout (cuDNN calls, kernels or"
    " operators), or called a model in train() mode that has such layers"};
