"""`tealeaves heldout`, `completion`, `csl` and `methods`: the held-out likelihood commands."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

import numpy as np

from ..csl import csl
from ..csl import lda as csl_lda
from ..errors import ARCHIVE_ERRORS, InvalidCorpusError, MethodError
from ..files import csvout
from ..files.atomic import atomic_path
from ..files.textfile import read_lines
from ..heldout import HeldoutResult, completion, get_method, heldout, method_names
from ..heldout.crosscheck import CHECK_TEMPERATURES
from ..heldout.crosscheck import describe as describe_check
from ..output import numbers
from ..output.jsonout import write_json
from ..topics import Topics, as_lda
from ..util.limits import above, at_least, check_array_file, fraction
from .options import (
    MODEL_HELP,
    add_model_options,
    corpus_options,
    keep_option,
    load_kind_arg,
    load_model_arg,
    print_corpus,
    read_docs,
    run_options,
    sub_parser,
)

EXAMPLES = {
    "heldout": "tealeaves heldout model.npz heldout.txt --methods left-to-right,ais,chib --runs 10 "
               "--json out.json",
    "completion": "tealeaves completion model.npz heldout.txt --method left-to-right --observed 0.5",
    "csl": "tealeaves csl model.npz heldout.txt --samples 10000 --json csl.json   "
           "(or an RBM .npz with DATA = digits:test)",
    "methods": "tealeaves methods",
}


# CLI option -> method parameter (parameter names follow table 1 of Wallach et al. 2009)
METHOD_OPTIONS = {
    "particles": int, "variant": str, "rejuvenate": int, "temperatures": int, "samples": int, "burn_in": int,
    "iterations": int, "chain_length": int, "schedule": str, "max_states": int, "resampling": str,
    "order": str, "ess": float,
}


def _add_heldout(sub: Any) -> None:
    h = sub_parser(EXAMPLES, sub, "heldout", "held-out log-likelihood log P(w | Phi, alpha m) of documents")
    _common(h, "heldout")
    h.add_argument("--method", default=None, help="estimator (default left-to-right)")
    h.add_argument("--methods", default=None, help="comma-separated estimators to compare")
    h.set_defaults(func=_cmd_heldout, task="heldout")


def _add_completion(sub: Any) -> None:
    c = sub_parser(EXAMPLES, sub, "completion", "document completion log P(w2 | w1, Phi, alpha m)")
    _common(c, "completion")
    c.add_argument("--method", default=None, help="estimator (default left-to-right)")
    c.add_argument("--methods", default=None, help="comma-separated estimators to compare")
    c.add_argument("--observed", type=fraction(), default=0.5, help="fraction of each document observed")
    c.add_argument("--split", default="first", help="first (default) or random")
    c.set_defaults(func=_cmd_heldout, task="completion")


def _add_csl(sub: Any) -> None:
    cs = sub_parser(EXAMPLES, sub, "csl",
                    "CSL lower bound on log P(x) from a model's Markov chain (Bengio et al.)")
    cs.add_argument("model", help="topic model (any readable format), or an RBM .npz (arrays W, b, c)")
    cs.add_argument("data", help="documents for a topic model; for an RBM 0/1 rows (text or .npz "
                                 "with X) or digits:test / digits:train")
    add_model_options(cs)
    corpus_options(cs)
    cs.add_argument("--samples", type=at_least(1), default=10000,
                    help="latent states (biased: consecutive states per chain)")
    cs.add_argument("--thin", type=at_least(1), default=1)
    cs.add_argument("--burn-in", type=at_least(0), default=100)
    cs.add_argument("--chains", type=at_least(1), default=10)
    cs.add_argument("--biased", action="store_true", help="chains started at each test item")
    cs.add_argument("--doc-length", type=at_least(1), default=csl_lda.DOC_LENGTH,
                    help="LDA: tokens of each generated document (longer mixes more slowly)")
    cs.add_argument("--sweeps", type=at_least(0), default=csl_lda.SWEEPS,
                    help="LDA: collapsed Gibbs sweeps over the generated topics per step")
    cs.add_argument("--exact-prior", action="store_true",
                    help="LDA: draw theta from the prior (CSL = is-prior-theta)")
    run_options(cs)
    cs.set_defaults(func=_cmd_csl)


def _add_methods(sub: Any) -> None:
    m = sub_parser(EXAMPLES, sub, "methods", "list estimators and their parameters")
    m.set_defaults(func=_cmd_methods)


PARSERS = {  # command -> what adds its parser (`main.COMMANDS` lists them in order)
    "heldout": _add_heldout,
    "completion": _add_completion,
    "csl": _add_csl,
    "methods": _add_methods,
}


def _common(p: argparse.ArgumentParser, task: str) -> None:
    p.add_argument("model", help=MODEL_HELP)
    p.add_argument("docs", help="documents: text (one per line), word ids, or .npz")
    add_model_options(p)
    corpus_options(p)
    g = p.add_argument_group("estimator parameters (table 1 of Wallach et al. 2009)")
    for name, kind in METHOD_OPTIONS.items():
        text = _param_help(name, task)
        if text:  # no estimator of this task takes it (completion has no Chib-style chain)
            g.add_argument("--" + name.replace("_", "-"), dest=name, type=kind, default=None,
                           metavar=name.upper(), help=text)
    g.add_argument("--no-resample", dest="resample", action="store_true", default=None,
                   help=argparse.SUPPRESS)  # replaced by --variant: a one-line error says so
    p.add_argument("--runs", type=at_least(1), default=1, help="independent runs per document")
    a = p.add_argument_group("accuracy")
    a.add_argument("--target-sd", type=above(0), default=None, metavar="NATS",
                   help="nats per token: double each document's budget (particles, temperatures, ...) "
                        "until its run-to-run sd per token is below this and two budgets agree")
    a.add_argument("--target-gap", type=above(0), default=None, metavar="NATS",
                   help="nats per token: double each document's budget until its estimated Jensen gap "
                        "(sd^2 / 2 runs) is below this times its tokens and two budgets agree "
                        "(left-to-right doubles rejuvenate and particles in turn)")
    a.add_argument("--check", type=at_least(0), default=0, metavar="K",
                   help="cross-check on K random documents against an independent reference "
                        "(exact if short enough, else long AIS) and report the bias per token")
    a.add_argument("--check-temperatures", type=at_least(1), default=CHECK_TEMPERATURES, metavar="S",
                   help=f"temperatures of the AIS reference of --check (default {CHECK_TEMPERATURES})")
    run_options(p)
    keep_option(p)
    p.add_argument("--csv", default=None, help="write per-document results as CSV")


def _method_list(args: argparse.Namespace) -> list[str]:
    if args.method and args.methods:
        raise MethodError("give --method or --methods, not both")
    text = args.methods or args.method or "left-to-right"
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise MethodError("no method given")
    return names


def _param_help(name: str, task: str) -> str:
    """Which methods take the parameter, what it is and its default there."""
    parts = []
    for method in method_names(task):
        p = get_method(method, task).params_for(task).get(name)
        if p is not None:
            named = p.choices and all(str(c) in p.help for c in p.choices)
            choices = f"; one of {', '.join(map(str, p.choices))}" if p.choices and not named else ""
            parts.append(f"{method}: {p.help} (default {p.default}{choices})")
    return "; ".join(parts)


def _params_for(args: argparse.Namespace, names: list[str], task: str) -> list[dict[str, Any]]:
    if getattr(args, "resample", None):
        raise MethodError("--no-resample was replaced by --variant extend-only (and --variant "
                          "algorithm-3 is the paper's algorithm 3; the default smc is unbiased)")
    given = {k: getattr(args, k) for k in METHOD_OPTIONS if getattr(args, k, None) is not None}
    specs = [get_method(n, task) for n in names]
    accepted = [s.params_for(task) for s in specs]
    for k in given:
        if not any(k in a for a in accepted):
            raise MethodError(f"--{k.replace('_', '-')} does not apply to {', '.join(names)}")
    return [{k: v for k, v in given.items() if k in a} for a in accepted]


def _cmd_heldout(args: argparse.Namespace) -> int:
    model = load_kind_arg(args, args.model)
    if isinstance(model, Topics) and model.prior == "logistic-normal" and args.task == "heldout":
        if not (args.method or args.methods):  # its own estimator; one asked for is checked by heldout
            args.method = "ais"
    else:
        model = as_lda(args.task, model)
    names = _method_list(args)
    params = _params_for(args, names, args.task)
    docs = read_docs(args, args.docs, model)
    progress = None if not args.quiet else False
    results = []
    if args.keep is not None and len(names) > 1:  # DIR is this run's; each method keeps its own in DIR/METHOD
        from ..files.kept import Kept

        Kept(args.keep, f"{args.task} by several methods", {"methods": names}, len(names), "method")
    for name, p in zip(names, params, strict=True):
        keep = args.keep if args.keep is None or len(names) == 1 else os.path.join(args.keep, name)
        common = dict(runs=args.runs, seed=args.seed, workers=args.workers,
                      bootstrap=args.bootstrap, progress=progress, target_sd=args.target_sd,
                      target_gap=args.target_gap,
                      check=args.check, check_temperatures=args.check_temperatures,
                      max_hours=args.max_hours, keep=keep)
        if args.task == "completion":
            res = completion(model, docs, method=name, observed=args.observed, split=args.split,
                             **common, **p)
        else:
            res = heldout(model, docs, method=name, **common, **p)
        results.append(res)
    print_corpus(docs.report(), model.num_words)
    print(format_table(results))
    for line in result_notes(results):
        print(line)
        if line.startswith(("warning", "  warning")):
            print(f"tealeaves: {line.strip()}", file=sys.stderr)
    write_outputs(args, results, {"command": args.task, "model": args.model, "docs": args.docs})
    return 0


def result_notes(results: list[HeldoutResult]) -> list[str]:
    """Under the table: what kind of number each estimate is, the cross-check, the budgets."""
    lines = []
    for r in results:
        lines.append(f"{r.label}: {r.kind}")
        if r.sd_note:
            lines.append(f"  ± sd —: {r.sd_note}")
        if r.compile_seconds >= 0.1:
            lines.append(f"  {r.compile_seconds:.1f} s compiling or loading the numba kernels before the "
                         "timed part (not in seconds)")
        if r.caution:  # in the note; on its own line, so that standard error gets it too
            lines.append(f"  warning: {r.caution}")
        if r.check is not None:
            lines.append("  " + describe_check(r.check))
        if r.adaptive is not None:
            a = r.adaptive
            goal = (f"target sd {a['target_sd']} nats per token" if "target_sd" in a else
                    f"target gap {a['target_gap']} nats per token" if "target_gap" in a else
                    f"{a['chains']} chains agreeing within {a['tolerance']} nats per document")
            grown = a.get("grown", {a["budget_parameter"]: a["budgets"]})
            each = ", ".join(f"{g} per document median {int(np.median(b))}, max {int(np.max(b))}"
                             for g, b in grown.items() if len(b))
            lines.append(f"  {goal}: {each}; {a['not_converged']} document(s) did not converge")
    return lines


def format_table(results: list[HeldoutResult]) -> str:
    """method, total ± sd, [vs exact], per token, perplexity, tokens scored/dropped, seconds."""
    exact = next((r for r in results if r.method == "exact"), None)
    head = ["method", "total log-lik", "± sd"]
    if exact is not None:
        head.append("vs exact")
    head += ["per token", "perplexity", "tokens", "dropped", "seconds"]
    rows = []
    for r in results:
        row = [r.label, numbers.metric("total", r.total), numbers.metric("sd", r.sd, "")]  # the report's rule
        if exact is not None:
            row.append(f"{r.total - exact.total:+.{numbers.digits('total')}f}")
        row += [numbers.metric("per_token", r.per_token), numbers.metric("heldout_perplexity", r.perplexity),
                str(r.tokens), str(r.corpus.get("oov_tokens", 0)), numbers.metric("seconds", r.seconds)]
        rows.append(row)
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]
    lines = ["  ".join(h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in
                       enumerate(zip(cells, widths, strict=True)))
             for cells in [head, *rows]]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def write_outputs(args: argparse.Namespace, results: list[HeldoutResult], meta: dict) -> None:
    """--json and --csv (each written whole, via a temporary file)."""
    if getattr(args, "json", None):
        write_json(args.json, {**meta, "results": [r.to_dict() for r in results]})
    if getattr(args, "csv", None):
        with atomic_path(args.csv) as tmp, open(tmp, "w", newline="", encoding="utf-8") as fh:
            w = csvout.writer(fh)
            runs = max(r.runs for r in results)
            w.writerow(["method", "label", "document", "tokens", "log_prob",
                        *[f"run_{i}" for i in range(runs)]])
            for r in results:
                for d, (lp, n) in enumerate(zip(r.doc_log_prob, r.doc_tokens, strict=True)):
                    w.writerow([r.method, r.label, d, int(n), repr(float(lp)),
                                *[repr(float(v)) for v in r.run_log_prob[:, d]]])


def _cmd_csl(args: argparse.Namespace) -> int:
    from ..csl import LdaChain, load_rbm

    exact = None
    if _is_rbm(args.model):
        model = load_rbm(args.model)
        data = _read_binary_rows(args.data, model.num_visible)
        what = f"RBM {model.num_visible} visible x {model.num_hidden} hidden, {len(data)} test items"
        if min(model.num_visible, model.num_hidden) <= 20:
            exact = float(model.log_prob_exact(data).mean())
    else:
        topic_model = load_model_arg(args, args.model, "csl")
        data = read_docs(args, args.data, topic_model)
        model = LdaChain(topic_model, doc_length=args.doc_length, sweeps=args.sweeps,
                         exact_prior=args.exact_prior)
    res = csl(model, data, samples=args.samples, thin=args.thin, burn_in=args.burn_in,
              biased=args.biased, chains=args.chains, seed=args.seed, workers=args.workers,
              max_hours=args.max_hours)
    if "corpus" in res.extra:
        print_corpus(res.extra["corpus"], topic_model.num_words)
        left_out = res.extra["empty_documents_left_out"]
        what = f"LDA {topic_model.num_topics} topics, {len(data) - left_out} documents"
        if left_out:
            what += f" ({left_out} empty documents left out: no word of the model, log P = 0 says nothing)"
    kind = "biased CSL (tends to overestimate)" if args.biased else "CSL (a lower bound in expectation)"
    print(f"{kind} on {what}: mean log P(x) = {res.mean:.4f} "
          f"({res.chain_steps} chain steps, {res.seconds:.1f} s)")
    if res.mixing.get("ess_median") is not None:
        print(f"chain mixing: median effective sample size {res.mixing['ess_median']:.0f} of "
              f"{res.mixing['samples']} states (smallest {res.mixing['ess_min']:.0f}, over "
              f"{res.mixing['items_checked']} items)")
    if res.mixing.get("warning"):
        print(f"tealeaves: warning: {res.mixing['warning']}", file=sys.stderr)
    if exact is not None:
        print(f"exact mean log P(x) = {exact:.4f}")
        res.extra["exact_mean"] = exact
    if args.json:
        write_json(args.json, {"command": "csl", "model": args.model, "data": args.data,
                               "result": res.to_dict()})
    return 0


def _is_rbm(path: str) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(path) as z:
            return "W.npy" in z.namelist()
    except ARCHIVE_ERRORS:
        return False


def _read_binary_rows(path: str, width: int):
    import numpy as np

    from ..csl import load_digits_binary

    if path in ("digits:test", "digits:train"):
        train, test = load_digits_binary()
        X = test if path.endswith("test") else train
    elif path.endswith(".npz"):
        check_array_file(path)
        try:
            with np.load(path, allow_pickle=False) as f:
                X = np.asarray(f["X"], dtype=np.float64)
        except ARCHIVE_ERRORS as exc:
            raise InvalidCorpusError(f"{path}: expected an .npz with a 0/1 array X ({exc})") from None
    else:
        rows = [line.split() for _, line in read_lines(path) if line.strip()]
        try:
            X = np.array(rows, dtype=np.float64)
        except ValueError as exc:
            raise InvalidCorpusError(f"{path}: expected rows of 0/1 values of equal length ({exc})") from None
    if X.ndim != 2 or X.shape[1] != width or not np.isin(X, (0.0, 1.0)).all():
        raise InvalidCorpusError(f"{path}: expected 0/1 rows of width {width}, got shape {X.shape}")
    return X


def _cmd_methods(args: argparse.Namespace) -> int:
    for task in ("heldout", "completion"):
        print(f"{task} methods:")
        for name in method_names(task):
            spec = get_method(name, task)
            alias = f" (alias {', '.join(spec.aliases)})" if spec.aliases else ""
            print(f"  {name}{alias}: {spec.description}")
            for pname, p in spec.params_for(task).items():
                flag = pname.replace("_", "-")
                if p.kind is bool:
                    flag = f"no-{flag}" if p.default else flag
                print(f"      --{flag} (default {pname}={p.default}): {p.help}")
    return 0
