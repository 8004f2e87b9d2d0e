"""The inventory of the paper's checkable statements, and the list of its typos and inconsistencies.

Every statement has an id, a location, a short quotation, a kind (constant, inequality, rate, comparison,
experimental number, setup) and how it is checked: a claim id of the registry (``socal audit``), ``reproduce:<name>``
(a number of an experiment, recomputed by ``socal reproduce <name>`` from the setup the appendix describes and set
beside the paper's in docs/experiments.md), ``test:<file>`` (a unit test checks it), or None with the reason it cannot be checked.
``socal audit --coverage`` prints the counts; tests/test_inventory.py keeps every reference valid.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Statement", "STATEMENTS", "ISSUES", "FINDINGS", "KINDS", "coverage", "format_coverage"]

KINDS = ("constant", "inequality", "rate", "comparison", "experimental number", "setup")


@dataclass(frozen=True)
class Statement:
    id: str
    location: str
    quote: str
    kind: str
    check: str | None
    reason: str = ""  # why unchecked, or what the check leaves out
    sides: str = ""  # for rates and comparisons: which side is an upper bound, a lower bound, exact or observed


S = Statement
STATEMENTS = [
    # -- abstract and introduction -------------------------------------------------------------------------------
    S("abs-strip", "Abstract", "makes them analytic in a strip of half-width h pi/2", "inequality", "analytic-1d"),
    S("abs-rate", "Abstract", "estimates the calibration error at rate O~(1/sqrt(n)), with explicit constants",
      "rate", "main-bound-explicit"),
    S("abs-vs-quarter", "Abstract", "a qualitative improvement over the O(n^{-1/4}) rate achievable by bucketing or "
      "kernel smoothing", "comparison", "rate-table",
      "upper bound against upper bounds: n^{-1/4} is what bucketing/kernel smoothing are proved to achieve, not a "
      "lower bound for them (exp1-tuning-rules derives it; rate-table measures faster slopes)"),
    S("abs-lower", "Abstract", "A matching Omega(1/sqrt(n)) lower bound establishes minimax optimality up to "
      "logarithmic factors", "comparison", "lower-bound", "lower bound (minimax, two-point) against the upper bound "
      "of Prop. 'main': matched up to log^{3/2} n"),
    S("abs-platt", "Abstract", "the first finite-sample guarantee for second-order Platt scaling", "rate",
      "platt-approx"),
    S("abs-reconcile", "Abstract", "relate it quantitatively to the bucketed formulation of Ahdritz et al.",
      "inequality", "sandwich"),
    S("abs-experiments", "Abstract", "Our experiments confirm the predicted rate", "comparison", "experiments-as-run",
      "the experiments run outside the theorem's assumptions; the bound at their settings is vacuous"),
    S("intro-quarter", "Introduction", "bucketing or kernel-smoothing the two-dimensional score give only "
      "nonparametric n^{-1/4} rates", "rate", "exp1-tuning-rules",
      "an upper bound for Lipschitz targets ('give only' reads as a lower bound, which is not shown)"),
    S("intro-lecam", "Introduction", "matches Omega(1/sqrt(n)) Le Cam lower bound", "rate", "lower-bound"),
    S("contrib-rate", "Introduction, contributions", "rate O(log^{3/2} n / sqrt(n)) from 2-snapshots", "rate",
      "main-bound"),
    S("contrib-platt", "Introduction, contributions", "remapping ... approximately second-order calibrated at the "
      "same O~(1/sqrt(n)) rate", "rate", "platt-approx"),
    # -- setup -----------------------------------------------------------------------------------------------------
    S("def-feasible", "Definition 'def-ho-cal'", "m in [0,1], sigma^2 in [0, m(1-m)]", "setup", "test:test_validation.py",
      "the feasible region is the input domain of socal.perturb (raw=True checks it)"),
    S("def-ce2", "Definition 'def-ho-cal', Eq. (eq-ce-def)", "CE2 = E|eta1(S) - m| + E|eta2(S) - v|, v = m^2 + "
      "sigma^2", "setup", "test:test_truth_grid.py", "socal.truth computes it exactly; the estimators target it"),
    S("decomp", "Eq. (eq:decomp)", "eta1(1 - eta1) = E[f*(1-f*) | S] + Var(f* | S)", "inequality",
      "platt-exact", "the law of total variance; platt-exact checks the moment identities it rests on"),
    S("table-rates", "Table 'tab-overview'", "Rate O~(1/sqrt(n)) for first- and second-order", "rate", "main-bound",
      "first-order: Remark 'First-Order Calibration' (no proof given); second-order: Prop. 'main'"),
    # -- Section 3 ---------------------------------------------------------------------------------------------------
    S("kernel-support", "Definition 'def:perturb'", "The perturbed score S ~ k_h(.|s) satisfies S in [a,b]",
      "setup", "sampler"),
    S("rect-contains-F", "Section 3.1", "The rectangle R contains the feasible region F ... perturbed score may fall "
      "outside F but always lies in R", "setup", "step5-range",
      "true, and it is why v~ = m~^2 + var~ reaches 5/4: the proof's Step 5 forgets it"),
    S("h-2-6", "Section 3.1", "perturbation on the order of h = 2^{-6} does not degrade classifier performance",
      "experimental number", None, "a citation of Ciosek et al. (2026) about other models; no setup to recompute"),
    S("lem-analytic-1d", "Lemma 'thm:analytic' (1D)", "eta1 is analytic in {|Im z| < h pi/2} cap {0 <= Re z <= 1}",
      "inequality", "analytic-1d"),
    S("lem-analytic-2d", "Lemma 'thm:analytic' (2D)", "eta_j is analytic in m for each fixed real sigma^2, and in "
      "sigma^2 for each fixed real m", "inequality", "analytic-2d"),
    S("lem-bernstein", "Lemma 'prop:bernstein'", "sup |f - q_l| <= 2M theta^{-l}/(theta - 1), theta = 2 rho + "
      "sqrt(4 rho^2 + 1)", "inequality", "bernstein"),
    S("cor-approx", "Corollary 'cor:approx'", "eps_l <= B_theta theta^{-l}, B_theta = 2/(theta - 1), theta = h pi + "
      "sqrt(h^2 pi^2 + 1); we set M = 1 conservatively", "constant", "approx-corollary"),
    S("cor-approx-axes", "Corollary 'cor:approx' (2D, on R)", "approximated by degree-l (tensor product) polynomials "
      "... theta = h pi + sqrt(h^2 pi^2 + 1)", "constant", "bandwidth-axes",
      "per axis: [0, 1/4] maps to [-1, 1] with a factor 8, so the variance axis's theta is 4 h pi + sqrt(16 h^2 pi^2 "
      "+ 1), larger than the mean axis's; the two are equal at h_var = h_mean / 4"),
    S("degree-rule", "Section 3.3", "l = ceil(2 log n / log theta) makes eps_l = O(n^{-2})", "rate", "degree-rule"),
    S("basis-size", "Section 3.4", "phi has d = (l+1)^2 components", "constant", "covering"),
    S("erm-responses", "Section 3.4", "Y_i^(1) in {0,1} for eta1-hat; P_i = Y^(1) Y^(2) in {0,1} for eta2-hat",
      "setup", "test:test_math_properties.py",
      "unbiasedness of the responses (and of socal's all-pairs targets) checked exactly over the binomial"),
    # -- Section 4-6 ---------------------------------------------------------------------------------------------------
    S("prop-main", "Proposition 'thm:main'", "E|CE2-hat - CE2^pert| = O(log^{3/2} n / sqrt(n))", "rate", "main-bound"),
    S("prop-main-d", "Proposition 'thm:main'", "d = (l+1)^2 = O(log^2 n)", "rate", "degree-rule"),
    S("prop-main-const", "Proposition 'thm:main'", "The constant depends on h ... but not on the score distribution",
      "constant", "approx-corollary", "on the full strip M = sup |eta| is not bounded by 1 (certified |eta| = 31.7 "
      "in the check); the sharpest distribution-free bound at |Im z| = f h pi/2 is M(f) = 1 for f <= 1/2 and "
      "1/sin(f pi) above (certified, with witnesses that approach it), so a distribution-free constant exists at the "
      "cost of a smaller theta, the strip chosen per degree"),
    S("prop-main-mc", "Proposition 'thm:main'", "the rate, observed", "rate", "main-bound-mc"),
    S("remark-ce1", "Remark 'First-Order Calibration'", "estimating CE1 ... yielding the same near-1/sqrt(n) rate",
      "rate", None, "stated without proof; the 1-D analogue of the argument (d = l + 1) is not written out in the "
      "paper, so there is no step to check (socal.ce1 implements the estimator)"),
    S("rate-table-rows", "Section 4, rate comparison table", "Bucketing no certified rate; bucketing/kernel + "
      "perturbation O(n^{-1/4}); polynomial O(log^{3/2} n / sqrt(n))", "comparison", "rate-table",
      "rows are upper bounds; none is a lower bound for its method"),
    S("intro-complete", "Introduction (line 111), Section 'Lower Bound' (line 522)", "Propositions thm:main and "
      "prop:lb, taken together, provide a complete characterization of the sample complexity", "comparison",
      "rate-dependence", "complete in n at fixed h: the ratio is K(h)/c log^{3/2} n; in h the upper bound grows like "
      "1/h and the lower bound is constant, so the characterization is in n"),
    S("prop-lb", "Proposition 'prop:lb'", "max_b E|CE2-hat - CE2(P_b)| >= c/sqrt(n) for every h > 0, n >= 1",
      "inequality", "lower-bound"),
    S("prop-lb-exact", "Proposition 'prop:lb'", "the two-point risk, computed exactly", "inequality",
      "lower-bound-exact"),
    S("prop-recal", "Proposition 'thm:recal'", "T with the true eta is perfectly second-order calibrated",
      "inequality", "platt-exact"),
    S("that-clip", "Eq. (eq:That)", "Persistent negativity at a score s indicates the model overestimates its "
      "epistemic uncertainty at s", "setup", None, "interpretive; eta2-hat - eta1-hat^2 does not involve the "
      "model's reported sigma^2 (only as a coordinate), so negativity measures estimation noise, not the model"),
    S("cor-recal", "Corollary 'cor:approx_recal'", "E[CE(T-hat)] = O(log^{3/2} n / sqrt(n)); the second-moment "
      "bound is analogous", "rate", "platt-approx"),
    # -- Experiments (main text) ----------------------------------------------------------------------------------------
    S("exp1-slope", "Section 7, Experiment 1", "empirical log-log slope ~ -0.70 at both h in {1/16, 1/64}",
      "experimental number", "exp1-slopes",
      "socal's own run of Experiment 1 (its seeds, DGP draw and ensemble), not the paper's"),
    S("exp1-baseline-slopes", "Section 7, Experiment 1", "the -0.33 to -0.55 slopes of bucketing and NW",
      "experimental number", "exp1-slopes"),
    S("exp1-dominates", "Section 7, Experiment 1", "the polynomial estimator dominates at every n",
      "comparison", "exp1-slopes", "each (h, n) as a paired difference over the seeds (Bonferroni over all of them)"),
    S("exp1-variants", "Section 7, Experiment 1", "The two polynomial variants are indistinguishable, so the "
      "advantage is not an artefact of held-out tuning", "comparison", "exp1-slopes",
      "each (h, n) as a paired difference over the seeds (Bonferroni over all of them)"),
    S("exp1-spread", "Section 7 / App. 'app:exp1'", "replicate spread < 2e-5", "experimental number",
      "reproduce:rate"),
    S("exp1-vs-rate", "Section 7, Experiment 1", "at least as steep as the predicted -1/2 rate; consistent with "
      "their distribution-free Lipschitz rate", "comparison", "exp1-slopes",
      "an observed slope compared with upper-bound rates: steeper than an upper bound is consistent, not a "
      "confirmation; the bound itself is vacuous at the experiment's n"),
    S("exp2-pearson", "Section 7, Experiment 2", "Pearson 0.10 raw, 0.74 after T-hat", "experimental number",
      "reproduce:recalibration", "ours: 0.11 and 0.93 (docs/experiments.md)"),
    S("exp2-ce2", "Section 7, Experiment 2", "CE2 drops from 0.37 to 0.04 +- 0.01", "experimental number",
      "reproduce:recalibration", "ours: 0.28 and 0.038 +- 0.004 (docs/experiments.md)"),
    S("exp2-guarantee", "Section 7, Experiment 2", "exactly the rate-driven recalibration guarantee of Corollary "
      "'approx_recal' cashing out empirically", "comparison", "experiments-as-run",
      "degree 12 at h = 1/64, n = 2e4: eps_l alone is about 22 with M = 1; the corollary guarantees nothing there"),
    S("exp3-collapse", "Section 7, Experiment 3", "raw (m, sigma^2) plug-in collapses near tau ~ 0.06",
      "experimental number", "reproduce:decision"),
    S("exp3-tracks", "Section 7, Experiment 3", "2-D second-order Platt tracks the oracle across tau >= 0",
      "experimental number", "reproduce:decision"),
    S("exp3-lesson", "Section 7, Experiment 3", "exactly what Proposition 'thm:recal' promises", "comparison",
      "experiments-as-run", "the proposition is about the true eta; Exp 3 fits eta on unperturbed scores"),
    S("exp4-yields", "Section 7 / App. 'app:exp4'", "46.4 (2-D second-order), 30.9 (2-D first-order), ~26 (1-D "
      "and raw), 49.8 (oracle) per 100 at 5%", "experimental number", "reproduce:real-labels"),
    S("exp4-win", "Section 7 / App. 'app:exp4'", "per-baseline win fractions >= 0.97; AUC lift CI above 0",
      "experimental number", "reproduce:real-labels"),
    S("exp4-data", "App. 'app:exp4'", "300 tasks with 20 votes each", "experimental number",
      "test:test_datasets.py"),
    S("exp4-eta2", "Section 7, Experiment 4", "2 theta(1 - theta), whose calibrated form 2 eta1 - 2 eta2 requires "
      "eta2", "setup", "platt-exact", "linearity of expectation in (theta, theta^2)"),
    # -- Appendix: experiment setups ----------------------------------------------------------------------------------
    S("exp1-sampler", "App. 'app:exp1'", "G^{-1}(u; s, h) = s + 2h artanh(tan(u/(2h)))", "setup", "sampler"),
    S("exp1-grid", "App. 'app:exp1'", "2^18 Sobol points on a 1025 x 257 grid; two replicates agree to 2e-5",
      "experimental number", "reproduce:rate"),
    S("exp1-K", "App. 'app:exp1'", "K = clip(ceil(c (n/h^2)^{1/4}), 2, 200), the 2D-histogram MSE balance for an "
      "O(1/h)-Lipschitz target", "setup", "exp1-tuning-rules"),
    S("exp1-b", "App. 'app:exp1'", "b = c h^{1/2} n^{-1/4}", "setup", "exp1-tuning-rules"),
    S("exp1-caps", "App. 'app:exp1'", "caps L_cap in {44, 88}, halving to a floor of 4, ridge 1e-6 ... 1",
      "setup", "experiments-as-run", "a departure: the theorem's degree rule gives more at these n"),
    S("exp1-dual", "App. 'app:exp1'", "switching to dual form when (l+1)^2 > n", "setup", None,
      "an implementation choice with no number to check (socal solves the primal with a ridge)"),
    S("exp2-features", "App. 'app:exp2'", "degree 12 (169 features)", "constant", "exp-setup-numbers"),
    S("exp2-ridge", "App. 'app:exp2'", "numerical ridge floor 1e-12 tr(G)/169, no CV", "setup",
      "experiments-as-run"),
    S("exp2-sd", "App. 'app:exp2'", "mean +- SD over 20 draws of the n = 2e4 calibration set", "setup",
      "reproduce:recalibration"),
    S("exp3-weights", "App. 'app:exp3'", "weights (0.25, 0.25, 0.35, 0.15); about half pass the borderline filter",
      "experimental number", "exp-setup-numbers"),
    S("exp3-eta2", "App. 'app:exp3'", "eta2 ~ 0.25 versus eta2 ~ 0.5", "experimental number",
      "exp3-cohort-moments"),
    S("exp3-features", "App. 'app:exp3'", "d_2D = 4 per axis (25 features); 8 sigma^2 - 1 in [-1, 1]", "constant",
      "exp-setup-numbers"),
    S("exp3-grid", "App. 'app:exp3'", "threshold grid of 71 points in [-0.05, 0.30]", "constant",
      "exp-setup-numbers"),
    S("exp3-repeats", "App. 'app:exp3'", "200 repeats, N_cal = 3000, N_eval = 8000", "setup", "reproduce:decision"),
    S("exp4-xor", "App. 'app:exp4'", "the marginal of m and the marginal of s are the same ... in both cohorts",
      "setup", "exp-setup-numbers"),
    S("exp4-features", "App. 'app:exp4'", "total-degree-3 tensor basis in (m, s), 10 features", "constant",
      "exp-setup-numbers"),
    S("exp4-config", "App. 'app:exp4'", "chosen configuration (0.12, 0.22, 0.06, 0.08, 0.35)", "setup",
      "reproduce:real-labels"),
    S("exp3-gain-mean", "Section 7, Experiment 3 (line 651)", "g(theta) = 2 theta^2 - 2 theta + 0.5 - c has "
      "conditional mean 2 eta2(S) - 2 eta1(S) + 0.5 - c", "setup", "exp3-cohort-moments", "an identity (linearity), "
      "sympy"),
    S("exp3-refer-no-one", "Section 7, Experiment 3 (line 660)", "First-order methods cannot separate the "
      "subpopulations and refer essentially no one", "experimental number", "reproduce:decision",
      "computed by socal.experiments.decision.shape_checks ('first-order methods refer almost no one (tau >= 0)': the "
      "largest referral fraction of raw m and the 1-D and 2-D first-order Platt maps at tau >= 0, held at <= 0.05)"),
    S("exp3-recal-promise", "Section 7, Experiment 3 (line 660)", "The lesson is exactly what Proposition thm:recal "
      "promises", "comparison", "experiments-as-run", "Prop. thm:recal is about the true eta1, eta2; Exp 3 fits "
      "them (ridge, degree 4/6) on unperturbed scores, where neither it nor Cor. approx_recal applies"),
    S("exp-projection", "App. Experiments 2-3 (lines 882, 925)", "predictions are projected onto eta1 in [0, 1], "
      "eta1^2 <= eta2 <= eta1 before forming (sigma^2)'", "setup", "platt-approx", "not the map of Eq. (That), "
      "which clips eta2 - eta1^2 at 0 only: platt-approx checks (That); the experiments' extra upper clip "
      "eta2 <= eta1 is not analysed (a finding below)"),
    S("laptop", "Section 'Compute Resources'", "all experiments can be run on a standard laptop",
      "experimental number", "reproduce:rate", "ours: Exp 1 in 451 s on 2 cores (docs/experiments.md)"),
    # -- Appendix C: proofs ----------------------------------------------------------------------------------------------
    S("posreal", "Lemma 'lem:posreal'", "Re sech(a + ib) = cosh a cos b / |cosh(a + ib)|^2 > 0 for |b| < pi/2",
      "inequality", "posreal"),
    S("analytic-bound", "App. C.2", "|sech((z - s)/h)| <= 1/cos(b/h) <= 1/cos(pi/2 - delta/h)", "inequality",
      "analytic-1d", "|cosh(a + ib)|^2 = sinh^2 a + cos^2 b, an identity (sympy, in analytic-1d's 'decided by')"),
    S("step1-fstar", "Prop. 'main', Step 1 (line 1492)", "f* in F_l (the clipped best polynomial approximation "
      "to eta) with ||f* - eta||_inf <= eps_l = O(theta^{-m}) = O(n^{-2})", "inequality", "degree-rule",
      "theta^-l <= n^-2 certified; clipping to [0, 1] cannot move q_l away from eta in [0, 1]; eps_l itself rests on "
      "approx-corollary's M"),
    S("step2a", "Prop. 'main', Step 2(a) (lines 1497-1500)", "E[h_f | S] = (f - f*)(f + f* - 2 eta) = (f - eta)^2 "
      "- (f* - eta)^2", "inequality", "main-bound", "an identity, proved by sympy (main-bound's 'decided by')"),
    S("aux-net-2n", "Lemma 'lem-aux-1', proof (lines 1311-1318)", "P_n h_{g_fhat} <= P_n h_fhat + 2 delta_n <= "
      "2/n", "inequality", "aux-lipschitz", "the term factor delta_n = 2/n is computed there (4/n with the sharp "
      "factor); it needs P_n h_fhat <= 0, an attained ERM over F_l: the infimum over clipped polynomials need not be "
      "attained and clip(LS) is not it (exact rationals in main-bound)"),
    S("aux-tail", "Lemma 'lem-aux-1', proof (lines 1455-1460)", "E[...] <= 4 eps_l^2 + 406 d log(3n)/n + 406 u/n",
      "constant", "aux-1", "the constants 1216/3 <= 406 and 408 = 2 + 406, exactly"),
    S("aux-max-sum", "Lemma 'lem-aux-1', proof (lines 1437-1457)", "max{4/n, 4 eps_l^2, 406 (d log(3n) + u)/n} <= "
      "4 eps_l^2 + 406 d log(3n)/n + 406 u/n", "inequality", "aux-1",
      "each entry is at most the sum of the nonnegative terms; 4/n <= 406 d log(3n)/n since 406 log 3 >= 4 (exact)"),
    S("step4-degree", "Prop. 'main', Step 4 (line 1623)", "(l + 1) <= 2 log n / log theta + 2 in "
      "406 (2 log n/log theta + 2)^2 log(3n) + 408", "inequality", "degree-rule",
      "certified at 52 (n, h) pairs (balls at 50 digits)"),
    S("u-tail", "Prop. 'main', Step 5 (lines 1725-1745)", "||h - h'||_inf <= 1/n gives 2/n; P(U > t + 2/n) <= "
      "2 (6n)^{2(l+1)^2} exp(-n t^2/2)", "inequality", "covering", "the count (6n)^{2(l+1)^2} is (3/eps)^{(l+1)^2} "
      "squared at eps = 1/(2n), and 2 ||h - h'|| = 2/n, both computed in covering (sympy); the exponent needs Step 5's "
      "range 2 (step5-range refutes it) and the cover exists for P_l, not F_l (main-bound)"),
    S("analytic-D", "App. C.2", "Re D(t + ib) > 0, so D != 0 in the strip", "inequality", "analytic-1d"),
    S("hartogs", "App. C.2", "By Hartogs' theorem, separate analyticity implies joint analyticity", "inequality",
      "analytic-2d"),
    S("bernstein-ellipse", "App. C.3", "B(a) subset S when sinh(a pi) = 2 rho; theta = e^{a pi} = 2 rho + "
      "sqrt(4 rho^2 + 1); 2M c^{l+1}/(1-c) = 2M theta^{-l}/(theta-1)", "constant", "bernstein"),
    S("covering", "Lemma 'lem-covering'", "N(eps, P_l) <= (3/eps)^{(l+1)^2}, 1 + 2/eps <= 3/eps", "inequality",
      "covering"),
    S("aux-const", "Lemma 'lem-aux-1'", "304/3, 3n mu/1216 <= n mu/406, 408 = 2 + 406", "constant", "aux-1"),
    S("aux-lip", "Lemma 'lem-aux-1', proof", "|h_f - h_g| <= 2|f - g| since f, g in [0, 1]", "inequality",
      "aux-lipschitz"),
    S("aux-range", "Lemma 'lem-aux-1', proof", "h_g in [-4, 4], so mu_g - h_g <= mu_g + 4 <= 8", "inequality",
      "step2-constants"),
    S("step2b", "Prop. 'main', Step 2(b)", "|h_f| <= 1 * 4 = 4", "inequality", "step2-constants"),
    S("step2c", "Prop. 'main', Step 2(c)", "E[h_f^2] <= 16 ||f - f*||^2; E[h_f^2] <= 32 E[h_f] + 64 eps_l^2",
      "inequality", "step2-constants"),
    S("step3", "Prop. 'main', Step 3", "E||f-hat - eta||^2 <= 5 eps_l^2 + (406 d log(3n) + 408)/n", "inequality",
      "main-bound"),
    S("step4", "Prop. 'main', Step 4", "E|CE2^plug - CE2^pert| <= 2 sqrt(A_n)", "inequality", "main-bound"),
    S("step4-eps", "Prop. 'main', Step 4", "eps_l^2 <= B^2 theta^{-2l} <= B^2 n^{-4}", "inequality", "degree-rule"),
    S("step5-range", "Prop. 'main', Step 5", "Every member of G_l is bounded in [0, 2]; s -> |f(s) - m~| takes "
      "values in [0, 1]", "inequality", "step5-range"),
    S("step5-cover", "Prop. 'main', Step 5", "log N(eps, G_l) <= 2(l+1)^2 log(6/eps)", "inequality", "covering"),
    S("step5-hoeffding", "Prop. 'main', Step 5", "Hoeffding (range 2): 2 exp(-n t^2 / 2)", "constant",
      "main-bound", "the exponent follows from the range, which step5-range refutes"),
    S("step5-tstar", "Prop. 'main', Step 5", "t* = sqrt((4(l+1)^2 log(6n) + 2 log 2)/n); E[U] <= 2/n + t* + "
      "1/(n t*)", "inequality", "main-bound-explicit"),
    S("step5-class", "Prop. 'main', Step 5", "(eta1-hat, eta2-hat) in P_l x P_l regardless of the data "
      "realisation", "setup", "main-bound", "the ERM's clipped functions are not polynomials and the unclipped "
      "ones need not have sup norm <= 1: the class of the covering is not the estimator's"),
    S("step5-final", "Prop. 'main', Step 5", "both terms are O(log^{3/2} n / sqrt(n))", "rate",
      "main-bound-explicit"),
    # -- Appendix D: reconciliation ---------------------------------------------------------------------------------------
    S("snapshot-law", "App. D.1", "(p0, p1/2, p1) = (1 - 2 mu1 + mu2, 2(mu1 - mu2), mu2)", "setup", "sandwich"),
    S("sandwich", "Lemma 'lem:sandwich'", "delta1 + delta2 <= 3/2 W1 <= 3 (delta1 + delta2)", "inequality",
      "sandwich"),
    S("w1-formula", "Lemma 'lem:sandwich', proof", "W1 = |Delta_0| + |Delta_1|", "constant", "property-exact"),
    S("prop-exact", "Property 'prop:exact'", "CE2 = 0 iff W1([x]) = 0 a.e.", "inequality", "property-exact"),
    S("prop-a2u", "Property 'prop:ahdritz-to-us'", "CE2 <= 3/2 eps", "inequality", "property-ahdritz-to-us"),
    S("prop-u2a", "Property 'prop:us-to-ahdritz'", "P[W1 > 2 eps/delta] <= delta", "inequality",
      "property-us-to-ahdritz"),
    S("remark-avg", "Remark, App. D", "1/2 W1_bar <= CE2 <= 3/2 W1_bar", "inequality", "remark-average-w1"),
    S("remark-avg-tight", "Remark, App. D", "the constants 1/2 and 3/2, over populations", "inequality",
      "sandwich-tightness"),
    # -- Appendix E: lower bound ---------------------------------------------------------------------------------------------
    S("lb-dominance", "Lemma 'lem:dom'", "F_m~(p) <= p for m0 = 1 and every h > 0", "inequality", "dominance"),
    S("lb-constant-eta", "App. E.1 (lines 2090-2097)", "eta1 = p_b, eta2 = p_b^2 (constants); CE^pert(P_b) = "
      "E|p_b - m~| + E|p_b^2 - W|", "setup", "lower-bound-exact", "transport.ce_two_point computes exactly this form "
      "and the exact risk uses it"),
    S("lb-F-closed", "App. E.3 (line 2121)", "F_m~(p) = 1 - G((1 - p)/h)/G(1/h)", "constant", "dominance",
      "follows from G' = sech and G odd (both sympy); dominance evaluates F in balls"),
    S("lb-phi-deriv", "App. E.3 (line 2143)", "phi'(p) = 2 F_m~(p) - 1 <= 2p - 1", "inequality", "dominance",
      "the inequality is F(p) <= p (certified on 11,994 grid points); the computed gap/eps of lower-bound agrees"),
    S("lb-psi-deriv", "App. E.3 (line 2160)", "psi'(p) = 2p (2 F_W(p^2) - 1), |psi'(p)| <= 2p", "inequality",
      "lower-bound", "through the gap it gives (9/16 eps, checked against the computed CE^pert)"),
    S("lb-lecam", "App. E.4 (lines 2200-2206)", "max_b E|theta-hat - theta(P_b)| >= (1/2)|theta(P_1) - theta(P_0)| "
      "(1 - TV)", "inequality", "lower-bound", "checked on the family at n = 4, 16 against the exact two-point "
      "minimax risk (error bound 1e-12)"),
    S("lb-phi", "App. E, first moment", "phi(p1) - phi(p0) <= -13/16 eps", "inequality", "lower-bound"),
    S("lb-psi", "App. E, second moment", "|psi(p1) - psi(p0)| <= 2 p1 eps <= eps/4", "inequality", "lower-bound"),
    S("lb-gap", "App. E, Eq. (eq:gap)", "gap >= 9/16 eps >= eps/2", "constant", "lower-bound"),
    S("lb-kl", "App. E, KL bound", "p1(1 - p1) >= (1/16)(15/16) >= 1/18; KL <= 18 eps^2; tensorized 36 n eps^2",
      "constant", "lower-bound"),
    S("lb-tv", "App. E, Le Cam", "TV <= 3 eps sqrt(2n) <= 1/2 for eps = 1/(6 sqrt(2n)); eps <= 1/16 for n >= 4",
      "inequality", "lower-bound"),
    S("lb-c", "App. E, Le Cam", "c := 1/(48 sqrt 2), absolute, independent of h; n in {1,2,3} holds trivially "
      "with a smaller constant", "constant", "lower-bound"),
]


# typos and inconsistencies found while inventorying (not claims: nothing to compute, or the check is a comparison
# of two places of the paper)
ISSUES = [
    ("Section 3 (intro)", "'analytic in a strip of width h pi/2' where the lemma and abstract say half-width h pi/2"),
    ("Section 3 (intro)", "'to enforce smoothness of calibration first-order calibration functions' (doubled "
     "phrase)"),
    ("Section 3.1, end", "an unfinished sentence: 'Hence all our practical results concern the perturbed classifier. "
     "We use'"),
    ("Introduction", "a missing full stop: '(epistemic uncertainty)  We propose'"),
    ("Proof of Prop. 'main', Steps 1 and 4", "the degree is called m ('O(theta^{-m})', 'm = ceil(2 log n / log "
     "theta)'), the letter of the mean prediction; elsewhere it is l"),
    ("Lemma 'lem-covering', proof", "'V_m := span{...}' then 'V_l' for the same space"),
    ("Lemma 'lem-aux-1', proof", "cites 'Step 2(b)' and 'Step 2(c)' of the main proof, which comes after it"),
    ("Section 7, Experiment 4 vs App. 'app:exp4'", "'the four 1-D and raw baselines' lists five methods (raw m, raw "
     "s, raw 1 - s, 1-D first-order, 1-D second-order)"),
    ("App. 'app:exp4'", "the Methods list has 'raw 2m(1 - m)' where the summary says 'raw m'"),
    ("App. 'app:exp4'", "'300 tasks with 20 votes each': the file has 290 tasks with 20 votes and 10 with 21-25 "
     "(after 5 duplicate (worker, task) rows are dropped); socal keeps the first 20 (tests/test_datasets.py)"),
]

# findings of audit claims that the paper's text states otherwise: listed beside the typos so that a reader of the
# coverage sees them, but they are findings (each has its claim and verdict), not typos
FINDINGS = [
    ("App. 'app:exp3'", "eta2 ~ 0.5 for the hidden subtype, but theta in {0.12, 0.88} gives E theta^2 = 0.395",
     "exp3-cohort-moments"),
    ("Prop. 'main', Step 5 (line 1645)", "'Every member of G_l is bounded in [0,2]': for f, g in P_l the summand "
     "|f(s) - m~| + |g(s) - v~| reaches 17/4 on R (9/4 for clipped f, g), since v~ = m~^2 + var~ reaches 5/4",
     "step5-range"),
    ("Corollary 'cor:approx'", "'M = 1 conservatively': sup |eta| on the strip is unbounded near its edge, so M = 1 "
     "is not a bound there", "approx-corollary"),
    ("App. Experiments 2-3 (lines 882, 925) vs Eq. (That)", "the experiments project onto {eta1^2 <= eta2 <= eta1}; "
     "the corollary analyses T-hat = (eta1-hat, max(0, eta2-hat - eta1-hat^2)), which has no upper clip: the map "
     "the experiments confirm is not the map the corollary bounds", "platt-approx"),
]


# Which side of each rate statement or rate comparison is an upper bound, a lower bound, an exact value or an
# observation (the audit's rate-dependence claim states the same per part).  "a vs b": the statement compares a with b.
SIDE_WORDS = ("upper", "lower", "exact", "observed")
SIDES = {
    "abs-rate": "upper", "abs-platt": "upper", "contrib-rate": "upper", "contrib-platt": "upper",
    "table-rates": "upper", "prop-main": "upper", "step5-final": "upper", "cor-recal": "upper",
    "remark-ce1": "upper", "degree-rule": "upper", "prop-main-d": "exact",
    "intro-quarter": "upper", "intro-lecam": "upper vs lower", "abs-lower": "lower vs upper",
    "intro-complete": "upper vs lower", "abs-vs-quarter": "upper vs upper", "rate-table-rows": "upper vs upper",
    "prop-main-mc": "observed vs upper", "abs-experiments": "observed vs upper", "exp1-vs-rate": "observed vs upper",
    "exp2-guarantee": "observed vs upper", "exp1-dominates": "observed vs observed",
    "exp1-variants": "observed vs observed",
    "exp3-lesson": "observed vs exact", "exp3-recal-promise": "observed vs exact",
}
STATEMENTS = [Statement(**{**s.__dict__, "sides": SIDES.get(s.id, "")}) for s in STATEMENTS]


def coverage(registry=None):
    """Counts of the inventory: total, by how checked, by kind; plus the unchecked statements with reasons."""
    checked = [s for s in STATEMENTS if s.check and not s.check.startswith(("reproduce:", "test:"))]
    reproduced = [s for s in STATEMENTS if s.check and s.check.startswith("reproduce:")]
    tested = [s for s in STATEMENTS if s.check and s.check.startswith("test:")]
    unchecked = [s for s in STATEMENTS if not s.check]
    by_kind = {k: sum(1 for s in STATEMENTS if s.kind == k) for k in KINDS}
    claims_used = sorted({s.check for s in checked})
    out = {"statements": len(STATEMENTS), "audit claims": len(checked), "reproduced": len(reproduced),
           "unit tests": len(tested), "not checkable": len(unchecked), "by kind": by_kind,
           "claims referenced": len(claims_used), "issues (typos, inconsistencies)": len(ISSUES),
           "findings stated otherwise in the text": len(FINDINGS),
           "unchecked": [(s.id, s.location, s.reason) for s in unchecked],
           "rates and comparisons": [(s.id, s.kind, s.sides, s.check) for s in STATEMENTS
                                     if s.kind in ("rate", "comparison")]}
    if registry is not None:
        out["registered claims not in the inventory"] = sorted(set(registry) - set(claims_used))
    return out


def format_coverage(cov):
    n = cov["statements"]
    done = n - cov["not checkable"]
    lines = [f"inventory: {n} checkable statements of the paper; {done} checked ({100 * done / n:.0f}%): "
             f"{cov['audit claims']} by audit claims ({cov['claims referenced']} claims), {cov['reproduced']} by "
             f"'socal reproduce', {cov['unit tests']} by unit tests; {cov['not checkable']} not checkable",
             "by kind: " + ", ".join(f"{k} {v}" for k, v in cov["by kind"].items())]
    for sid, loc, why in cov["unchecked"]:
        lines.append(f"  not checked: {sid} ({loc}): {why}")
    rates = cov.get("rates and comparisons", [])
    lines.append(f"rates and rate comparisons: {len(rates)}, each with its sides (upper / lower bound, exact, "
                 f"observed); every parameter (n, h, d, the degree cap) in rate-dependence")
    for sid, kind, sides, check in rates:
        lines.append(f"  {sid:<20} {kind:<11} {sides:<21} {check or '(not checked)'}")
    if cov.get("registered claims not in the inventory"):
        lines.append(f"  claims of other packages (not in this inventory): "
                     f"{', '.join(cov['registered claims not in the inventory'])}")
    lines.append(f"typos and inconsistencies: {cov['issues (typos, inconsistencies)']}")
    for loc, text in ISSUES:
        lines.append(f"  - {loc}: {text}")
    lines.append(f"findings where the text says otherwise (claims, not typos): {len(FINDINGS)}")
    for loc, text, cid in FINDINGS:
        lines.append(f"  - {loc}: {text} ({cid})")
    return "\n".join(lines)
