package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Paths inside the pods, as the operator writes them.
const (
	jobRevisionMount = "/var/lib/parentrag/revision"
	queryClaimMount  = "/var/lib/parentrag"
)

// TestJobBuiltCorpusServesFromItsVolume builds the docs with an indexing
// Job whose pod runs on the host (`parentrag index` with the pod's args,
// environment and service account, its claim a directory), checks the
// Corpus promotes the revision, then serves it as a query pod of the
// Retriever would, from the same directory mounted at the query pod's
// path. A change of the policy's child size makes a second Job with its own
// claim; the Deployment rolls to that claim and serves it, while the first
// revision's Job and claim are kept for rollback.
func TestJobBuiltCorpusServesFromItsVolume(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a whole control plane with Jobs and workloads; skipped with -short")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := startJobCluster(t, ctx)
	bin, err := env.BuildBinary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ns := "parentrag-job"
	if err := createNamespace(ctx, env, ns); err != nil {
		t.Fatal(err)
	}
	samples := filepath.Join(env.Root, "config", "samples")
	if _, err := env.Apply(ctx, ns, filepath.Join(samples, "parentrag_v1alpha1_chunkingpolicy.yaml"), filepath.Join(samples, "docs-configmap.yaml")); err != nil {
		t.Fatal(err)
	}
	corpus := claimCorpus(ns, "parentrag-docs", samplePolicy, v1alpha1.Source{Name: "docs",
		Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"parentrag.io/sample": "docs"}}})
	retriever := &v1alpha1.Retriever{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "parentrag-docs"}, Spec: v1alpha1.RetrieverSpec{
		CorpusRef: v1alpha1.LocalObjectReference{Name: corpus.Name}, Replicas: ptr.To[int32](2), MaxParents: 3, ChildTopK: 20,
	}}
	for _, obj := range []client.Object{corpus, retriever} {
		if err := env.Client.Create(ctx, obj); err != nil {
			t.Fatal(err)
		}
	}

	first := runIndexJob(t, ctx, env, bin, corpus, "")
	checkJobLockedDown(t, corpus, first)
	checkPromoted(t, ctx, env, corpus, first)
	if got := waitServing(t, env, corpus, retriever, ""); got != first.Revision {
		t.Fatalf("the Retriever serves %s, want %s", got, first.Revision)
	}
	askFromClaim(t, ctx, env, bin, corpus, retriever, first)

	changeChild(t, ctx, env, samplePolicy, v1alpha1.ChunkSize{ChunkSize: 200, ChunkOverlap: 20})
	second := runIndexJob(t, ctx, env, bin, corpus, first.Revision)
	if second.Volume == first.Volume {
		t.Fatalf("both revisions were written to %s: each needs its own claim", first.Volume)
	}
	checkJobLockedDown(t, corpus, second)
	checkPromoted(t, ctx, env, corpus, second)
	// A new child size is a new policy: no unit of the first build fits.
	if u, docs := corpus.Status.LastBuild.UnitCache, corpus.Status.ActiveRevision.Documents; u == nil || u.Reused != 0 || u.Split != docs {
		t.Fatalf("after a policy change the Job reported unit cache %+v, want all %d documents split", u, docs)
	}
	if got := waitServing(t, env, corpus, retriever, first.Revision); got != second.Revision {
		t.Fatalf("the Retriever serves %s, want %s", got, second.Revision)
	}
	askFromClaim(t, ctx, env, bin, corpus, retriever, second)
	checkRetained(t, ctx, env, corpus, first)
}

// startJobCluster starts the control plane with Jobs, claims provisioned
// as host directories, workloads and the operator.
func startJobCluster(t *testing.T, ctx context.Context) *devcluster.Env {
	t.Helper()
	return startClusterWith(t, ctx, (*devcluster.Env).StartJobWorkloads)
}

// claimCorpus is a Corpus of the sources kept on read-write-many claims of
// the host-path class and built by Jobs.
func claimCorpus(ns, name, policy string, sources ...v1alpha1.Source) *v1alpha1.Corpus {
	return &v1alpha1.Corpus{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: v1alpha1.CorpusSpec{
			ChunkingPolicyRef: v1alpha1.PolicyReference{Name: policy},
			Sources:           sources,
			ParentStore: &v1alpha1.ParentStore{PersistentVolumeClaim: &v1alpha1.PersistentVolumeClaimParentStore{
				StorageClassName: ptr.To(devcluster.HostPathStorageClass), Size: resource.MustParse("1Gi"),
				AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			}},
			Indexing:        &v1alpha1.Indexing{Mode: v1alpha1.IndexingJob, BackoffLimit: ptr.To[int32](0)},
			RetainRevisions: 2,
		},
	}
}

// jobRun is one indexing Job whose pod ran on the host.
type jobRun struct {
	Revision string
	Job      *batchv1.Job
	Pod      *corev1.Pod
	Host     *devcluster.HostPod
	Exit     *devcluster.PodExit
	// Volume is the host directory of the revision's claim.
	Volume string
}

// runIndexJob waits for the indexing Job of a revision other than
// previous, runs its pod's container on the host once the pod is running,
// requires it to exit 0, and reports the exit in the pod's status.
func runIndexJob(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, c *v1alpha1.Corpus, previous string) *jobRun {
	t.Helper()
	run := &jobRun{Job: waitIndexJob(t, ctx, env, c, previous)}
	run.Revision = run.Job.Labels["parentrag.io/revision"]
	pod, err := env.WaitJobPod(ctx, c.Namespace, run.Job.Name, 2*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	run.Pod = pod
	if run.Host, run.Exit, err = env.RunPod(ctx, bin, pod); err != nil {
		t.Fatal(err)
	}
	if run.Exit.ExitCode != 0 {
		t.Fatalf("parentrag index of Job %s exited %d:\n%s", run.Job.Name, run.Exit.ExitCode, run.Exit.Log)
	}
	if err := env.ReportPodExit(ctx, pod, run.Exit); err != nil {
		t.Fatal(err)
	}
	run.Volume = run.Host.Mounts[jobRevisionMount]
	t.Logf("Job %s built revision %s into %s in %s (peak RSS %s)", run.Job.Name, short(run.Revision), run.Volume, run.Exit.Wall.Round(time.Millisecond), mib(run.Exit.PeakRSS))
	return run
}

// waitIndexJob waits until the Corpus attempts a revision other than
// previous and its indexing Job exists, and returns the Job. A Corpus that
// stalls instead fails the test at once, saying why.
func waitIndexJob(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, previous string) *batchv1.Job {
	t.Helper()
	var job batchv1.Job
	deadline := time.Now().Add(time.Duration(waitMinutes()) * time.Minute)
	for time.Now().Before(deadline) {
		if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
			t.Fatal(err)
		}
		if st := conditionOf(c.Status.Conditions, v1alpha1.ConditionStalled); st != nil && st.Status == metav1.ConditionTrue {
			t.Fatalf("Corpus %s stalled waiting for an indexing Job: %s: %s; sourceErrors %+v", c.Name, st.Reason, st.Message, c.Status.SourceErrors)
		}
		if rev := c.Status.LastAttemptedRevision; rev != "" && rev != previous {
			err := env.Client.Get(ctx, client.ObjectKey{Namespace: c.Namespace, Name: c.RevisionObjectName(rev) + "-index"}, &job)
			if err == nil {
				return &job
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no indexing Job for a revision other than %q: corpus status %+v", previous, c.Status)
	return nil
}

// checkJobLockedDown checks the Job runs `parentrag index` with the
// operator's arguments, as the indexer's service account, locked down, with
// the revision's claim read-write at the path the arguments name, and that
// the pod ran exactly that with the claim's host directory.
func checkJobLockedDown(t *testing.T, c *v1alpha1.Corpus, run *jobRun) {
	t.Helper()
	pod := run.Job.Spec.Template.Spec
	container := pod.Containers[0]
	if !slices.Equal(container.Args, controllers.IndexArgs(c, run.Revision, false)) || !slices.Equal(run.Pod.Spec.Containers[0].Args, container.Args) {
		t.Errorf("Job %s args %v, its pod's %v, want %v", run.Job.Name, container.Args, run.Pod.Spec.Containers[0].Args, controllers.IndexArgs(c, run.Revision, false))
	}
	sc, psc := container.SecurityContext, pod.SecurityContext
	if sc == nil || psc == nil || !ptr.Deref(sc.RunAsNonRoot, false) || !ptr.Deref(psc.RunAsNonRoot, false) || !ptr.Deref(sc.ReadOnlyRootFilesystem, false) ||
		ptr.Deref(sc.AllowPrivilegeEscalation, true) || sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 ||
		ptr.Deref(sc.Privileged, false) {
		t.Errorf("Job %s is not locked down: container %+v, pod %+v", run.Job.Name, sc, psc)
	}
	if pod.RestartPolicy != corev1.RestartPolicyNever || pod.ServiceAccountName != c.Name+"-indexer" || pod.HostNetwork || pod.HostPID {
		t.Errorf("Job %s pod: restartPolicy %s, service account %q", run.Job.Name, pod.RestartPolicy, pod.ServiceAccountName)
	}
	claim := c.RevisionObjectName(run.Revision)
	var mounted bool
	for _, v := range pod.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == claim && !v.PersistentVolumeClaim.ReadOnly {
			for _, m := range container.VolumeMounts {
				mounted = mounted || m.Name == v.Name && m.MountPath == jobRevisionMount && !m.ReadOnly
			}
		}
	}
	if !mounted {
		t.Errorf("Job %s does not mount claim %s read-write at %s: volumes %+v, mounts %+v", run.Job.Name, claim, jobRevisionMount, pod.Volumes, container.VolumeMounts)
	}
	if run.Volume == "" || !slices.Contains(run.Host.Args, "--volume="+run.Volume) {
		t.Errorf("the host run's args %v do not write to the claim's directory %q", run.Host.Args, run.Volume)
	}
}

// checkPromoted waits until the Corpus is Ready with the run's revision
// active on its claim, verified, and checks the bundle the run left on the
// claim's directory is that revision's.
func checkPromoted(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, run *jobRun) {
	t.Helper()
	eventually(t, time.Duration(waitMinutes())*time.Minute, "revision "+short(run.Revision)+" to be active", func() bool {
		env.Client.Get(ctx, client.ObjectKeyFromObject(c), c)
		a := c.Status.ActiveRevision
		return a != nil && a.Name == run.Revision && ready(c.Status.Conditions)
	})
	a := c.Status.ActiveRevision
	if a.Claim != c.RevisionObjectName(run.Revision) || a.Verification == nil || a.Verification.Result != v1alpha1.CheckPassed || a.Children == 0 || a.Parents == 0 {
		t.Fatalf("active revision %+v", a)
	}
	if lb := c.Status.LastBuild; lb == nil || lb.Revision != run.Revision || lb.Mode != v1alpha1.IndexingJob || lb.Job != run.Job.Name || lb.Result != "Succeeded" {
		t.Fatalf("lastBuild %+v", c.Status.LastBuild)
	}
	m, err := bundle.ReadManifest(filepath.Join(run.Volume, indexjob.BundleDir))
	if err != nil || m.Revision != run.Revision || m.Children != a.Children || m.Parents != a.Parents {
		t.Fatalf("the bundle on the claim's directory: %+v, %v", m, err)
	}
	// The Job controller counts the pod whose exit was reported.
	eventually(t, time.Minute, "Job "+run.Job.Name+" to complete", func() bool {
		env.Client.Get(ctx, client.ObjectKeyFromObject(run.Job), run.Job)
		return slices.ContainsFunc(run.Job.Status.Conditions, func(c batchv1.JobCondition) bool {
			return c.Type == batchv1.JobComplete && c.Status == corev1.ConditionTrue
		})
	})
}

// askFromClaim checks the Retriever's Deployment mounts the run's claim
// read-only and serves it with the claim arguments, then runs `parentrag
// serve` as its pod template says, the mount standing on the directory the
// Job wrote, and asks it the question. The server must leave the directory
// as it found it.
func askFromClaim(t *testing.T, ctx context.Context, env *devcluster.Env, bin string, c *v1alpha1.Corpus, r *v1alpha1.Retriever, run *jobRun) {
	t.Helper()
	var d appsv1.Deployment
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(r), &d); err != nil {
		t.Fatal(err)
	}
	spec := d.Spec.Template.Spec
	claim := c.RevisionObjectName(run.Revision)
	if got := d.Spec.Template.Annotations[devcluster.RevisionAnnotation]; got != run.Revision {
		t.Fatalf("Deployment template is on revision %s, want %s", got, run.Revision)
	}
	if v := spec.Volumes; len(v) != 1 || v[0].PersistentVolumeClaim == nil || v[0].PersistentVolumeClaim.ClaimName != claim || !v[0].PersistentVolumeClaim.ReadOnly {
		t.Fatalf("query pods do not mount claim %s read-only: %+v", claim, spec.Volumes)
	}
	if m := spec.Containers[0].VolumeMounts; len(m) != 1 || m[0].MountPath != queryClaimMount || !m[0].ReadOnly {
		t.Fatalf("query pods mount %+v, want the claim read-only at %s", m, queryClaimMount)
	}
	if !slices.Equal(spec.Containers[0].Args, controllers.ClaimServeArgs(r)) {
		t.Fatalf("query pod args %v, want %v", spec.Containers[0].Args, controllers.ClaimServeArgs(r))
	}
	before, err := treeState(run.Volume)
	if err != nil {
		t.Fatal(err)
	}
	srv, hp, err := env.StartPodServeMounted(ctx, bin, d.Namespace, d.Name, &spec)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if hp.Mounts[queryClaimMount] != run.Volume {
		t.Fatalf("the query pod's claim resolved to %s, the Job wrote to %s", hp.Mounts[queryClaimMount], run.Volume)
	}
	if err := srv.WaitReady(60 * time.Second); err != nil {
		t.Fatalf("%v\n%s", err, srv.Log())
	}
	resp, err := srv.Retrieve(ctx, question, 3)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Revision != run.Revision || len(resp.Results) == 0 || len(resp.Results) > 3 {
		t.Fatalf("answer from revision %s with %d parents, want revision %s and 1 to 3 parents", resp.Revision, len(resp.Results), run.Revision)
	}
	assertVectorStoreID(t, srv.URL, c.Name)
	top := resp.Results[0]
	if !strings.HasPrefix(top.DocID, "parentrag-docs/") || !strings.Contains(strings.ToLower(top.Text), "parent") || len(top.Matches) == 0 {
		t.Fatalf("top parent %s does not answer the question:\n%s", top.DocID, top.Text)
	}
	srv.Stop()
	after, err := treeState(run.Volume)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Fatalf("the query server changed its read-only claim's directory:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	t.Logf("revision %s served from claim %s (%s): top parent %s (score %.2f, %d matching children)", short(run.Revision), claim, run.Volume, top.DocID, top.Score, len(top.Matches))
}

// conditionOf returns the condition of a type, nil when absent.
func conditionOf(conds []metav1.Condition, typ string) *metav1.Condition {
	for i := range conds {
		if conds[i].Type == typ {
			return &conds[i]
		}
	}
	return nil
}

// treeState lists every file under dir with its size and modification
// time, one per line.
func treeState(dir string) (string, error) {
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %d %s\n", strings.TrimPrefix(path, dir), info.Size(), info.ModTime().Format(time.RFC3339Nano))
		return nil
	})
	return b.String(), err
}

// checkRetained checks a superseded revision is still in the history and
// its Job, claim, plan, status and manifest ConfigMaps, and the bundle on
// its claim's directory, are all kept.
func checkRetained(t *testing.T, ctx context.Context, env *devcluster.Env, c *v1alpha1.Corpus, old *jobRun) {
	t.Helper()
	if err := env.Client.Get(ctx, client.ObjectKeyFromObject(c), c); err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(c.Status.History, func(h v1alpha1.RevisionStatus) bool { return h.Name == old.Revision })
	if i < 0 || c.Status.History[i].Outcome != v1alpha1.OutcomeSuperseded || c.Status.History[i].Claim != c.RevisionObjectName(old.Revision) {
		t.Fatalf("revision %s is not retained as superseded on its claim: history %+v", short(old.Revision), c.Status.History)
	}
	base := c.RevisionObjectName(old.Revision)
	key := func(name string) client.ObjectKey { return client.ObjectKey{Namespace: c.Namespace, Name: name} }
	objs := map[string]client.Object{base + "-index": &batchv1.Job{}, base: &corev1.PersistentVolumeClaim{}}
	for _, name := range []string{base, base + "-plan", base + "-status"} {
		objs[name+" (ConfigMap)"] = &corev1.ConfigMap{}
	}
	for name, obj := range objs {
		if err := env.Client.Get(ctx, key(strings.TrimSuffix(name, " (ConfigMap)")), obj); err != nil || obj.GetDeletionTimestamp() != nil {
			t.Errorf("retained revision %s: %T %s: %v (deleting: %v)", short(old.Revision), obj, name, err, obj.GetDeletionTimestamp() != nil)
		}
	}
	if m, err := bundle.ReadManifest(filepath.Join(old.Volume, indexjob.BundleDir)); err != nil || m.Revision != old.Revision {
		t.Errorf("the retained revision's bundle: %+v, %v", m, err)
	}
}

// assertVectorStoreID checks that the query server at url names its one
// OpenAI vector store after the Corpus, wherever its revision lies.
func assertVectorStoreID(t *testing.T, url, corpus string) {
	t.Helper()
	resp, err := http.Get(url + "/v1/vector_stores")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var list struct {
		Data []struct {
			ID string `json:"id"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
		t.Fatalf("GET /v1/vector_stores: %v", err)
	}
	if resp.StatusCode != http.StatusOK || len(list.Data) != 1 || list.Data[0].ID != corpus {
		t.Fatalf("GET /v1/vector_stores: %d %+v, want the one store %q", resp.StatusCode, list.Data, corpus)
	}
}
