package controllers_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// claimCorpus is a Corpus of sampleDocs kept on claims and built by Jobs.
func claimCorpus(ns, policy string, modes ...corev1.PersistentVolumeAccessMode) *v1alpha1.Corpus {
	c := inlineCorpus(ns, policy, sampleDocs()...)
	c.Spec.ParentStore = &v1alpha1.ParentStore{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimParentStore{
		StorageClassName: ptr.To("fast"), Size: resource.MustParse("2Gi"), AccessModes: modes,
	}}
	c.Spec.Indexing = &v1alpha1.Indexing{BackoffLimit: ptr.To[int32](1), ActiveDeadlineSeconds: ptr.To[int64](600)}
	return c
}

// createAndWaitJob creates the Corpus and waits for the indexing Job of
// its first revision.
func createAndWaitJob(t *testing.T, c *v1alpha1.Corpus) *batchv1.Job {
	t.Helper()
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	var job batchv1.Job
	eventually(t, 30*time.Second, "the indexing Job", func() (bool, error) {
		get(t, c)
		rev := c.Status.LastAttemptedRevision
		if rev == "" {
			return false, nil
		}
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(rev) + "-index"}, &job)
		return err == nil, err
	})
	return &job
}

// runIndexer does what the Job's pod would: build the plan's revision into
// volume, as the indexer's service account.
func runIndexer(t *testing.T, c *v1alpha1.Corpus, job *batchv1.Job, volume string) error {
	t.Helper()
	return runIndexerIn(t, context.Background(), c, job, volume)
}

// runIndexerIn is runIndexer under ctx, which carries what the pod's
// environment would (a parent span).
func runIndexerIn(t *testing.T, ctx context.Context, c *v1alpha1.Corpus, job *batchv1.Job, volume string) error {
	t.Helper()
	sa, err := env.ServiceAccountClient(ctx, c.Namespace, job.Spec.Template.Spec.ServiceAccountName)
	if err != nil {
		t.Fatal(err)
	}
	r := &indexjob.Runner{Client: sa, Namespace: c.Namespace, Volume: volume}
	return r.Run(ctx, planName(job))
}

// planName reads the plan ConfigMap's name from the Job's arguments.
func planName(job *batchv1.Job) string {
	for _, a := range job.Spec.Template.Spec.Containers[0].Args {
		if v, ok := strings.CutPrefix(a, "--plan-configmap="); ok {
			return v
		}
	}
	return ""
}

func TestClaimCorpusIsBuiltByAJobAndServedFromItsClaim(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := claimCorpus(ns, p.Name, corev1.ReadWriteMany)
	job := createAndWaitJob(t, c)
	rev := c.Status.LastAttemptedRevision
	pod := job.Spec.Template.Spec
	container := pod.Containers[0]
	if !slices.Equal(container.Args, controllers.IndexArgs(c, rev, false)) || container.Image != "parentrag:test" ||
		*job.Spec.BackoffLimit != 1 || *job.Spec.ActiveDeadlineSeconds != 600 || pod.RestartPolicy != corev1.RestartPolicyNever {
		t.Fatalf("job spec: args %v image %s backoff %d deadline %d", container.Args, container.Image, *job.Spec.BackoffLimit, *job.Spec.ActiveDeadlineSeconds)
	}
	sc := container.SecurityContext
	if sc == nil || !*sc.ReadOnlyRootFilesystem || *sc.AllowPrivilegeEscalation || !*sc.RunAsNonRoot || !slices.Contains(sc.Capabilities.Drop, "ALL") || !*pod.SecurityContext.RunAsNonRoot {
		t.Fatalf("the indexing container is not locked down: %+v", sc)
	}
	if len(pod.Volumes) == 0 || pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != c.RevisionObjectName(rev) || pod.Volumes[0].PersistentVolumeClaim.ReadOnly {
		t.Fatalf("the revision's claim is not mounted read-write: %+v", pod.Volumes)
	}
	var pvc corev1.PersistentVolumeClaim
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(rev)}, &pvc); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(pvc.Spec.AccessModes, []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany}) || *pvc.Spec.StorageClassName != "fast" ||
		pvc.Spec.Resources.Requests.Storage().Cmp(resource.MustParse("2Gi")) != 0 || !metav1.IsControlledBy(&pvc, c) {
		t.Fatalf("claim spec %+v", pvc.Spec)
	}
	// The lexical embedder's Jobs keep the unit cache on the cache claim too.
	var cache corev1.PersistentVolumeClaim
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.Name + "-embedding-cache"}, &cache); err != nil || !metav1.IsControlledBy(&cache, c) {
		t.Fatalf("cache claim: %v (owned by the Corpus: %v)", err, metav1.IsControlledBy(&cache, c))
	}
	if !slices.ContainsFunc(pod.Volumes, func(v corev1.Volume) bool {
		return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == cache.Name && !v.PersistentVolumeClaim.ReadOnly
	}) || !slices.Contains(container.Args, "--embedding-cache-dir=/var/cache/parentrag") {
		t.Fatalf("the cache claim is not mounted read-write where the arguments name it: volumes %+v args %v", pod.Volumes, container.Args)
	}
	reconciling := condition(c, v1alpha1.ConditionReconciling)
	if reconciling.Status != metav1.ConditionTrue || reconciling.Reason != v1alpha1.ReasonIndexing || c.Status.LastBuild == nil || c.Status.LastBuild.Job != job.Name {
		t.Fatalf("while the Job runs: Reconciling %+v lastBuild %+v", reconciling, c.Status.LastBuild)
	}
	// The Job's pod, played here as the indexer's service account.
	volume := t.TempDir()
	if err := runIndexer(t, c, job, volume); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	a := c.Status.ActiveRevision
	if a.Name != rev || a.Claim != c.RevisionObjectName(rev) || a.Verification == nil || a.Verification.Result != v1alpha1.CheckPassed || a.Children == 0 {
		t.Fatalf("active revision %+v", a)
	}
	m, err := bundle.ReadManifest(volume + "/" + indexjob.BundleDir)
	if err != nil || m.Revision != rev || m.Children != a.Children {
		t.Fatalf("the bundle on the volume: %+v, %v", m, err)
	}
	// Query pods mount the claim read-only and serve the bundle on it.
	two := int32(2)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "ask"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, Replicas: &two}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &d)
		return err == nil, err
	})
	dpod := d.Spec.Template.Spec
	if !slices.Equal(dpod.Containers[0].Args, controllers.ClaimServeArgs(rt)) || dpod.Volumes[0].PersistentVolumeClaim == nil ||
		dpod.Volumes[0].PersistentVolumeClaim.ClaimName != a.Claim || !dpod.Volumes[0].PersistentVolumeClaim.ReadOnly {
		t.Fatalf("query pod args %v volumes %+v", dpod.Containers[0].Args, dpod.Volumes)
	}
	var role rbacv1.Role
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &role); err != nil || len(role.Rules) != 0 {
		t.Fatalf("a claim revision's query pods need no ConfigMap: rules %+v, %v", role.Rules, err)
	}
}

func TestAFailedIndexingJobPromotesNothing(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := claimCorpus(ns, p.Name)
	job := createAndWaitJob(t, c)
	// The pod reports a failure, then Kubernetes gives up on the Job.
	status := &corev1.ConfigMap{}
	if err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: c.RevisionObjectName(job.Labels["parentrag.io/revision"]) + "-status"}, status); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(status.DeepCopy())
	status.Data = map[string]string{indexjob.FailureKey: indexjob.Encode(indexjob.Failure{Document: "inline/tides", Message: "embedding API answered 401"})}
	if err := k8s.Patch(context.Background(), status, patch); err != nil {
		t.Fatal(err)
	}
	failJob(t, job)
	eventually(t, 30*time.Second, "the Corpus to stall on the failed Job", func() (bool, error) {
		get(t, c)
		return condition(c, v1alpha1.ConditionStalled).Reason == v1alpha1.ReasonIndexFailed, nil
	})
	msg := condition(c, v1alpha1.ConditionStalled).Message
	lb := c.Status.LastBuild
	if c.Status.ActiveRevision != nil || !strings.Contains(msg, "document inline/tides: embedding API answered 401") || !strings.Contains(msg, "kubectl logs -n "+ns+" job/"+job.Name) ||
		lb == nil || lb.Result != "Failed" {
		t.Fatalf("after the failure: active %v, Stalled %q, lastBuild %+v", c.Status.ActiveRevision, msg, lb)
	}
	if !hasEvent(t, c, v1alpha1.ReasonIndexFailed) {
		t.Fatal("no IndexFailed event")
	}
}

// failJob marks a Job failed as the Job controller would.
func failJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	now := metav1.Now()
	patch := client.MergeFrom(job.DeepCopy())
	job.Status.StartTime = &now
	job.Status.Failed = 2
	job.Status.Conditions = []batchv1.JobCondition{
		{Type: batchv1.JobFailureTarget, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
		{Type: batchv1.JobFailed, Status: corev1.ConditionTrue, Reason: "BackoffLimitExceeded", Message: "Job has reached the specified backoff limit", LastTransitionTime: now},
	}
	if err := k8s.Status().Patch(context.Background(), job, patch); err != nil {
		t.Fatal(err)
	}
}

func TestClaimsRefuseMoreReplicasThanTheirAccessModesAllow(t *testing.T) {
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := claimCorpus(ns, p.Name, corev1.ReadWriteOnce)
	job := createAndWaitJob(t, c)
	if err := runIndexer(t, c, job, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	three := int32(3)
	rt := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "wide"},
		Spec: v1alpha1.RetrieverSpec{CorpusRef: v1alpha1.LocalObjectReference{Name: c.Name}, Replicas: &three}}
	if err := k8s.Create(context.Background(), rt); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Retriever to be refused", func() (bool, error) {
		get(t, rt)
		st := conditionOf(rt.Status.Conditions, v1alpha1.ConditionStalled)
		return st.Reason == v1alpha1.ReasonClaimAccessMode && strings.Contains(st.Message, "ReadOnlyMany or ReadWriteMany"), nil
	})
	// In process, the operator cannot write a claim: the API server says so.
	bad := claimCorpus(ns, p.Name)
	bad.Spec.Indexing.Mode = v1alpha1.IndexingInProcess
	if err := k8s.Create(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "indexing.mode must be Job") {
		t.Fatalf("a claim store built in process: %v", err)
	}
}

func TestAJobReadsURLSourcesTheOperatorOnlyIdentified(t *testing.T) {
	docs := sampleDocs()
	srv := archiveServer(t, tarGz(t, [][2]string{{"a/volcanoes.md", docs[0].Text}, {"a/tides.md", docs[1].Text}, {"../escape.md", "x"}}))
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	c := claimCorpus(ns, p.Name)
	c.Spec.Sources = []v1alpha1.Source{{Name: "site", URL: &v1alpha1.URLSource{URL: srv.URL + "/docs.tar.gz"}}}
	job := createAndWaitJob(t, c)
	if err := runIndexer(t, c, job, t.TempDir()); err != nil {
		t.Fatal(err)
	}
	waitCurrent(t, c, 30*time.Second)
	// The revision the operator named from the archive's checksum is the one
	// the Job built from its documents, with the rejected entry reported.
	if a := c.Status.ActiveRevision; a.Documents != 2 || len(c.Status.SourceErrors) != 1 || !strings.Contains(c.Status.SourceErrors[0].Document, "escape") {
		t.Fatalf("active %+v, source errors %+v", a, c.Status.SourceErrors)
	}
}
