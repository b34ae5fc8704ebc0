package controllers

import (
	"context"
	"fmt"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/indexjob"
)

// Keys of a claim revision's manifest ConfigMap besides the manifest.
const (
	claimKey        = "claim"
	verificationKey = "verification.json"
	qualityGateKey  = "qualityGate.json"
)

// resultGrace is how long a Job that succeeded may take to be seen with
// its result before the build counts as failed.
const resultGrace = 2 * time.Minute

// jobPoll is how often a running indexing Job is looked at besides the
// events of the Job and of its status ConfigMap.
const jobPoll = 5 * time.Second

// buildWithJob builds the revision in an indexing Job: it creates the
// plan, the claim and the Job once, mirrors the Job's progress into
// status while it runs, and stores the revision's manifest ConfigMap once
// the Job reported its result. A failed Job stalls the Corpus until its
// spec changes or a reconcile is requested, which runs a new Job.
func (r *CorpusReconciler) buildWithJob(ctx context.Context, s *corpusState, name string) (ctrl.Result, error) {
	names := jobObjectsOf(s.corpus, s.revision)
	if err := r.cancelStaleJobs(ctx, s); err != nil {
		return ctrl.Result{}, err
	}
	job, err := r.ensureJob(ctx, s, names)
	if err != nil {
		return ctrl.Result{}, err
	}
	var status corev1.ConfigMap
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: names.status}, &status); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading the indexing status ConfigMap %s: %w", names.status, err)
	}
	progress, result, failure, err := indexjob.ReadStatus(&status)
	if err != nil {
		return ctrl.Result{}, err
	}
	if result != nil || jobFinished(job) {
		s.corpus.Status.Progress = nil
	}
	switch {
	case result != nil:
		return ctrl.Result{}, r.storeJobRevision(ctx, s, name, names, job, result)
	case jobFailed(job) || failure != nil && jobFinished(job):
		return ctrl.Result{}, r.jobFailed(ctx, s, job, failure)
	case jobSucceeded(job) && time.Since(finishedAt(job)) > resultGrace:
		return ctrl.Result{}, r.jobFailed(ctx, s, job, &indexjob.Failure{Message: "the Job succeeded but reported no result"})
	}
	s.building = true
	s.reason, s.message = v1alpha1.ReasonIndexing, fmt.Sprintf("indexing Job %s builds revision %s", job.Name, s.revision)
	if progress != nil {
		s.corpus.Status.Progress = &v1alpha1.IndexProgress{Revision: s.revision, Stage: progress.Stage, Done: progress.Done, Total: progress.Total}
		s.message += fmt.Sprintf(": %s %d/%d", progress.Stage, progress.Done, progress.Total)
	}
	if err := r.checkJobPods(ctx, s, job); err != nil {
		s.building = false
		return ctrl.Result{}, err
	}
	return ctrl.Result{RequeueAfter: jobPoll}, nil
}

// ensureJob creates what the revision's Job needs, then the Job; each is
// created once and left alone after. While tracing is on, the Job carries
// the reconcile's span, the parent of its own (jobTraceEnv).
func (r *CorpusReconciler) ensureJob(ctx context.Context, s *corpusState, names jobObjects) (*batchv1.Job, error) {
	var job batchv1.Job
	err := r.reader().Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: names.job}, &job)
	if err == nil {
		if reconcileRequested(s.corpus) && jobFailed(&job) {
			return nil, r.restartJob(ctx, s, &job, names)
		}
		return &job, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, fmt.Errorf("reading indexing Job %s: %w", names.job, err)
	}
	plan, err := r.planJob(ctx, s, names)
	if err != nil {
		return nil, err
	}
	if err := r.applyIndexer(ctx, s.corpus, names, plan); err != nil {
		return nil, err
	}
	for _, obj := range r.jobPrerequisites(s.corpus, plan, names) {
		if err := r.createOwned(ctx, s.corpus, obj); err != nil {
			return nil, err
		}
	}
	env := append(credentialEnv(s.corpus), jobTraceEnv(ctx)...)
	built := indexJob(s.corpus, s.revision, r.indexImage(s.corpus), r.activeClaim(ctx, s.corpus, plan.Gate), env)
	if err := r.createOwned(ctx, s.corpus, built); err != nil {
		return nil, err
	}
	s.corpus.Status.LastBuild = &v1alpha1.BuildStatus{Revision: s.revision, Mode: v1alpha1.IndexingJob, Job: built.Name,
		Logs: jobLogs(built), Result: "Running", StartedAt: ptr.To(metav1.Now())}
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, "IndexingJobCreated", "Build", "indexing Job %s builds revision %s", built.Name, s.revision)
	return built, nil
}

// jobPrerequisites are the plan and status ConfigMaps, the revision's
// claim and the Corpus's cache claim, which keeps the unit cache and, with
// an embedding model, the embedding cache between Jobs.
func (r *CorpusReconciler) jobPrerequisites(c *v1alpha1.Corpus, plan *indexjob.Plan, names jobObjects) []client.Object {
	return []client.Object{
		planConfigMap(c, plan, names), statusConfigMap(c, plan.Revision, names),
		claim(c, names.claim, revisionLabels(c, plan.Revision, "")),
		claim(c, cacheClaimName(c), corpusLabels(c)),
	}
}

// createOwned creates obj owned by the Corpus; one that exists is kept.
func (r *CorpusReconciler) createOwned(ctx context.Context, c *v1alpha1.Corpus, obj client.Object) error {
	if err := controllerutil.SetControllerReference(c, obj, r.Scheme()); err != nil {
		return err
	}
	if err := r.Create(ctx, obj); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating %s %s: %w", kindOf(obj, r.Scheme()), obj.GetName(), err)
	}
	return nil
}

// applyIndexer gives the Jobs their identity and lets it read the plan and
// the sources, and write the status.
func (r *CorpusReconciler) applyIndexer(ctx context.Context, c *v1alpha1.Corpus, names jobObjects, plan *indexjob.Plan) error {
	var sources, secrets []string
	for _, src := range plan.Sources {
		if src.ConfigMap != nil {
			sources = append(sources, src.ConfigMap.Name)
		}
		if src.URL != nil && src.URL.SecretRef != nil {
			secrets = append(secrets, src.URL.SecretRef.Name)
		}
	}
	for _, obj := range []applyConfiguration{indexerServiceAccount(c), indexerRole(c, names, sources, secrets), indexerRoleBinding(c)} {
		if err := r.Apply(ctx, obj, client.FieldOwner(FieldManager), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying the indexer's %s: %w", describeApply(obj), err)
		}
	}
	return nil
}

// storeJobRevision records what the Job built: the manifest ConfigMap,
// created last, makes the revision built.
func (r *CorpusReconciler) storeJobRevision(ctx context.Context, s *corpusState, name string, names jobObjects, job *batchv1.Job, res *indexjob.Result) error {
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: s.corpus.Namespace, Name: name, Labels: revisionLabels(s.corpus, s.revision, cmbundle.RoleManifest)},
		Data: map[string]string{
			cmbundle.ManifestKey: indexjob.Encode(res.Manifest), claimKey: names.claim,
			verificationKey: indexjob.Encode(res.Verification),
		},
		Immutable: ptr.To(true),
	}
	if res.QualityGate != nil {
		cm.Data[qualityGateKey] = indexjob.Encode(res.QualityGate)
	}
	if err := r.createOwned(ctx, s.corpus, cm); err != nil {
		return err
	}
	s.corpus.Status.SourceErrors = res.SourceErrors
	finished := metav1.NewTime(finishedAt(job))
	s.corpus.Status.LastBuild = &v1alpha1.BuildStatus{Revision: s.revision, Mode: v1alpha1.IndexingJob, Job: job.Name, Logs: jobLogs(job),
		Result: "Succeeded", StartedAt: job.Status.StartTime, FinishedAt: &finished, EmbeddingCache: res.EmbeddingCache,
		UnitCache: res.UnitCache}
	built, _, err := revisionFromManifest(cm)
	if err != nil {
		return err
	}
	s.built = built
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, "RevisionBuilt", "Build",
		"indexing Job %s built revision %s: %s", job.Name, s.revision, revisionCounts(built))
	return nil
}

// jobFailed stalls the Corpus on a failed Job, saying why, in which
// document, and where its logs are; the active revision keeps serving.
func (r *CorpusReconciler) jobFailed(ctx context.Context, s *corpusState, job *batchv1.Job, f *indexjob.Failure) error {
	msg := jobFailureMessage(job, f)
	lb := &v1alpha1.BuildStatus{Revision: s.revision, Mode: v1alpha1.IndexingJob, Job: job.Name, Logs: jobLogs(job), Result: "Failed", Message: msg, StartedAt: job.Status.StartTime}
	if prev := s.corpus.Status.LastBuild; prev == nil || prev.Revision != s.revision || prev.Result != "Failed" {
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeWarning, v1alpha1.ReasonIndexFailed, "Build", "indexing Job %s failed: %s", job.Name, msg)
	}
	s.corpus.Status.LastBuild = lb
	return stalled(v1alpha1.ReasonIndexFailed, fmt.Errorf("indexing Job %s failed: %s (logs: %s); annotate %s to run it again", job.Name, msg, lb.Logs, ReconcileAtAnno))
}

// jobFailureMessage is what the Job reported, why the operator failed it,
// or what Kubernetes says.
func jobFailureMessage(job *batchv1.Job, f *indexjob.Failure) string {
	if f != nil {
		return f.Error()
	}
	if msg := job.Annotations[FailureAnno]; msg != "" {
		return msg
	}
	for _, cond := range job.Status.Conditions {
		if cond.Type == batchv1.JobFailed && cond.Status == corev1.ConditionTrue {
			return cond.Reason + ": " + cond.Message
		}
	}
	return "the Job failed"
}

// restartJob deletes a failed Job and its report so that the next
// reconcile runs it again.
func (r *CorpusReconciler) restartJob(ctx context.Context, s *corpusState, job *batchv1.Job, names jobObjects) error {
	if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
		return err
	}
	status := statusConfigMap(s.corpus, s.revision, names)
	if err := r.Delete(ctx, status); client.IgnoreNotFound(err) != nil {
		return err
	}
	return fmt.Errorf("restarting indexing Job %s on request", job.Name)
}

// cancelStaleJobs deletes indexing Jobs still running for another revision
// than the one the Corpus calls for, with what they wrote.
func (r *CorpusReconciler) cancelStaleJobs(ctx context.Context, s *corpusState) error {
	var jobs batchv1.JobList
	if err := r.List(ctx, &jobs, client.InNamespace(s.corpus.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: s.corpus.Name}); err != nil {
		return fmt.Errorf("listing indexing Jobs: %w", err)
	}
	for i := range jobs.Items {
		job := &jobs.Items[i]
		stale := job.Labels[cmbundle.LabelRevision]
		if stale == s.revision || jobFinished(job) {
			continue
		}
		if err := r.Delete(ctx, job, client.PropagationPolicy(metav1.DeletePropagationBackground)); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting superseded indexing Job %s: %w", job.Name, err)
		}
		if err := r.discardRevision(ctx, s.corpus, stale); err != nil {
			return err
		}
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, v1alpha1.ReasonBuildSuperseded, "Build",
			"stopped indexing Job %s of revision %s: superseded by %s", job.Name, stale, s.revision)
	}
	return nil
}

// discardRevision removes everything of a revision that is neither
// retained nor wanted: its Milvus collection or Postgres table (from the
// inventory), then its Job, claim and ConfigMaps.
func (r *CorpusReconciler) discardRevision(ctx context.Context, c *v1alpha1.Corpus, revision string) error {
	if k := indexKindOf(c); k != nil {
		if err := r.dropIndexes(ctx, c, k, func(rev string) bool { return rev != revision }); err != nil {
			return err
		}
	}
	return r.deleteRevisionObjects(ctx, c, revision)
}

// deleteRevisionObjects deletes a revision's ConfigMaps, claim and Job.
func (r *CorpusReconciler) deleteRevisionObjects(ctx context.Context, c *v1alpha1.Corpus, revision string) error {
	if err := r.deleteLabelled(ctx, c.Namespace, map[string]string{cmbundle.LabelCorpus: c.Name, cmbundle.LabelRevision: revision}); err != nil {
		return fmt.Errorf("deleting revision %s: %w", revision, err)
	}
	return nil
}

// jobLogs says how to read a Job's logs.
func jobLogs(job *batchv1.Job) string {
	return fmt.Sprintf("kubectl logs -n %s job/%s", job.Namespace, job.Name)
}

// jobSucceeded, jobFailed and jobFinished read a Job's conditions; a Job
// the operator failed (FailureAnno) has failed too.
func jobSucceeded(job *batchv1.Job) bool { return jobCondition(job, batchv1.JobComplete) }
func jobFailed(job *batchv1.Job) bool {
	return jobCondition(job, batchv1.JobFailed) || job.Annotations[FailureAnno] != ""
}
func jobFinished(job *batchv1.Job) bool { return jobSucceeded(job) || jobFailed(job) }

// jobCondition reports whether a condition of the Job is True.
func jobCondition(job *batchv1.Job, typ batchv1.JobConditionType) bool {
	for _, c := range job.Status.Conditions {
		if c.Type == typ && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// finishedAt is when the Job completed, now when unknown.
func finishedAt(job *batchv1.Job) time.Time {
	if job.Status.CompletionTime != nil {
		return job.Status.CompletionTime.Time
	}
	return time.Now()
}
