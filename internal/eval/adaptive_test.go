package eval

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/retrieval/retrieve"
)

// EnvSweep names the environment variable that runs the long evaluations
// of the adaptive strategy (hours on two cores): the tuning of its
// settings on one half of SQuAD and QASPER, and the report on the other.
const EnvSweep = "PARENTRAG_EVAL_SWEEP"

// skipUnlessSweep skips a test unless EnvSweep is set.
func skipUnlessSweep(t *testing.T) {
	t.Helper()
	if os.Getenv(EnvSweep) == "" {
		t.Skipf("set %s=1 to run (hours on two cores)", EnvSweep)
	}
}

// adaptiveSpec is the policy the adaptive strategy is tuned and reported
// with: section parents of up to 1500 characters over sentences. It was
// chosen on the tuning half among shapes of two and three levels
// (docs/evaluation.md).
func adaptiveSpec() *v1alpha1.ChunkingPolicySpec {
	return &v1alpha1.ChunkingPolicySpec{
		Levels: []v1alpha1.Level{v1alpha1.LevelParent, v1alpha1.LevelSentence},
		Parent: &v1alpha1.ChunkSize{ChunkSize: 1500, Boundaries: v1alpha1.BoundariesSections},
	}
}

// adaptiveGrid are the settings tried on the tuning half.
func adaptiveGrid() []retrieve.AdaptiveOptions {
	var out []retrieve.AdaptiveOptions
	for _, share := range []float64{0.25, 0.5, 0.75} {
		for _, window := range []int{0, 1, 2} {
			out = append(out, retrieve.AdaptiveOptions{MergeShare: share, WindowSentences: window})
		}
	}
	return out
}

// tuningHalf is the half of SQuAD or QASPER the settings are chosen on,
// every second question of it (to halve the time of the sweep).
func tuningHalf(set evalSet) evalSet {
	set.half, set.every = 1, 2
	return set
}

// TestAdaptiveTuning chooses the adaptive strategy's settings on the
// tuning half of SQuAD and QASPER with adaptiveSpec: among the settings
// of adaptiveGrid whose default answer (maxParents 3, no budget) is, on
// both sets, no longer in words than parent-child's with the same policy,
// the one whose default answers hold an answer most often (mean over the
// sets), ties within a thousandth going to the higher answer-in-context
// over the budgets. It fails unless that is the defaults of the code, and
// logs every row (docs/evaluation.md).
func TestAdaptiveTuning(t *testing.T) {
	skipUnlessSweep(t)
	sets := map[string]evalSet{"SQuAD": tuningHalf(squadSet(t)), "QASPER": tuningHalf(qasperSet(t))}
	limit := map[string]float64{}
	for name, set := range sets {
		pc := runSet(t, set, adaptiveSpec(), []string{ParentChild})[0]
		limit[name] = pc.DefaultWords
		t.Logf("| %s | parent-child | | | %s |", name, adaptiveRow(pc))
	}
	best, bestScore := retrieve.AdaptiveOptions{}, [2]float64{-1, -1}
	for _, opts := range adaptiveGrid() {
		score, admissible := [2]float64{}, true
		for _, name := range []string{"SQuAD", "QASPER"} {
			set := sets[name]
			set.adaptive = &opts
			r := runSet(t, set, adaptiveSpec(), []string{Adaptive})[0]
			t.Logf("| %s | adaptive | %.2f | %d | %s |", name, opts.MergeShare, opts.WindowSentences, adaptiveRow(r))
			admissible = admissible && r.DefaultWords <= limit[name]
			score[0] += *r.AnswerInDefault / 2
			score[1] += meanInContext(r) / 2
		}
		if admissible && (score[0] > bestScore[0]+0.001 || score[0] > bestScore[0]-0.001 && score[1] > bestScore[1]) {
			best, bestScore = opts, score
		}
	}
	t.Logf("chosen: merge share %.2f, window %d sentences (answer in the default answer %.3f, in context %.3f)", best.MergeShare, best.WindowSentences, bestScore[0], bestScore[1])
	if best.MergeShare != retrieve.DefaultMergeShare || best.WindowSentences != retrieve.DefaultWindowSentences {
		t.Errorf("the tuning half chooses merge share %.2f and window %d; the code's defaults are %.2f and %d", best.MergeShare, best.WindowSentences, retrieve.DefaultMergeShare, retrieve.DefaultWindowSentences)
	}
}

// adaptiveRow formats the figures the tuning compares: nDCG@10, the
// default answer and its words, and answer-in-context at each budget.
func adaptiveRow(r Report) string {
	row := fmt.Sprintf("%s | %s | %.0f |", f3(*r.NDCG10), f3(*r.AnswerInDefault), r.DefaultWords)
	for _, b := range evalBudgets {
		row += " " + f3(r.AnswerInContext[strconv.Itoa(b)]) + " |"
	}
	return row
}

// meanInContext is the mean answer-in-context over the budgets.
func meanInContext(r Report) float64 {
	sum := 0.0
	for _, b := range evalBudgets {
		sum += r.AnswerInContext[strconv.Itoa(b)]
	}
	return sum / float64(len(evalBudgets))
}

// TestAdaptiveHeldOut scores, on the half of SQuAD and QASPER no setting
// was chosen on, every strategy with the default policy, parent-child
// with section parents on QASPER, and parent-child and adaptive with
// adaptiveSpec, and logs the rows of docs/evaluation.md. It fails when the
// published claims stop holding: on both sets adaptive's default answer
// is shorter than parent-child's on the same index, and the default mode
// is Adaptive exactly when adaptive returns answers at least as often as
// every other strategy at every budget on both sets (it does not: the
// default stays Parents).
func TestAdaptiveHeldOut(t *testing.T) {
	skipUnlessSweep(t)
	winsEverywhere := true
	for name, set := range map[string]evalSet{"SQuAD": squadSet(t), "QASPER": qasperSet(t)} {
		set.half = 2
		others := runSet(t, set, nil, []string{FlatChild, FlatParent, ParentChild, SentenceWindow})
		logReports(t, name+", default policy", others)
		if name == "QASPER" {
			sections := runSet(t, set, sectionPolicy(), []string{FlatChild, FlatParent, ParentChild})
			logReports(t, name+", section parents", sections)
			others = append(others, sections...)
		}
		own := runSet(t, set, adaptiveSpec(), []string{ParentChild, Adaptive})
		logReports(t, name+", section parents over sentences", own)
		for _, r := range append(others, own...) {
			t.Logf("| %s | %s | %s |", name, r.Strategy, adaptiveRow(r))
		}
		pc, adaptive := own[0], own[1]
		if adaptive.DefaultWords >= pc.DefaultWords {
			t.Errorf("%s: adaptive's default answer has %.0f words, parent-child's on the same index %.0f", name, adaptive.DefaultWords, pc.DefaultWords)
		}
		for _, other := range append(others, pc) {
			for _, b := range evalBudgets {
				key := strconv.Itoa(b)
				if adaptive.AnswerInContext[key] < other.AnswerInContext[key] {
					t.Logf("%s: answer-in-context@%d: adaptive %.3f is below %s %.3f", name, b, adaptive.AnswerInContext[key], other.Strategy, other.AnswerInContext[key])
					winsEverywhere = false
				}
			}
		}
	}
	if winsEverywhere != (retrieve.DefaultMode == retrieve.ModeAdaptive) {
		t.Errorf("adaptive wins at every budget on both sets: %v; the default mode is %s", winsEverywhere, retrieve.DefaultMode)
	}
}
