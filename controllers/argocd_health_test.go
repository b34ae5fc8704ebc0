package controllers_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	lua "github.com/yuin/gopher-lua"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// argoHealth is what an Argo CD health script returned.
type argoHealth struct{ Status, Message string }

// argoHealthStatuses are the codes Argo CD accepts from a health script;
// it turns any other into Unknown.
var argoHealthStatuses = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// healthScript reads config/argocd/<kind>.lua.
func healthScript(t *testing.T, kind string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(env.Root, "config", "argocd", strings.ToLower(kind)+".lua"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// runHealthScript runs script as Argo CD's lua VM runs a health
// customization: a state with only the package, base and table libraries
// (Argo CD's default, without resource.customizations.useOpenLibs), a
// one-second deadline, and the object as the global obj, converted from
// map[string]interface{} as Argo CD's decodeValue does. A status outside
// Argo CD's codes fails the test.
func runHealthScript(t *testing.T, script string, obj map[string]any) argoHealth {
	t.Helper()
	l := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer l.Close()
	for name, open := range map[string]lua.LGFunction{lua.LoadLibName: lua.OpenPackage, lua.BaseLibName: lua.OpenBase, lua.TabLibName: lua.OpenTable} {
		l.Push(l.NewFunction(open))
		l.Push(lua.LString(name))
		l.Call(1, 0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	l.SetContext(ctx)
	l.SetGlobal("obj", luaValue(l, obj))
	if err := l.DoString(script); err != nil {
		t.Fatalf("the health script failed: %v", err)
	}
	hs, ok := l.Get(-1).(*lua.LTable)
	if !ok {
		t.Fatalf("the health script returned %s, want a table", l.Get(-1).Type())
	}
	got := argoHealth{Status: lua.LVAsString(hs.RawGetString("status")), Message: lua.LVAsString(hs.RawGetString("message"))}
	if !argoHealthStatuses[got.Status] {
		t.Fatalf("the health script returned status %q, which Argo CD reads as Unknown", got.Status)
	}
	return got
}

// luaValue converts a decoded JSON value to Lua as Argo CD does.
func luaValue(l *lua.LState, value any) lua.LValue {
	switch v := value.(type) {
	case float64:
		return lua.LNumber(v)
	case int64:
		return lua.LNumber(v)
	case string:
		return lua.LString(v)
	case bool:
		return lua.LBool(v)
	case []any:
		arr := l.CreateTable(len(v), 0)
		for _, item := range v {
			arr.Append(luaValue(l, item))
		}
		return arr
	case map[string]any:
		tbl := l.CreateTable(0, len(v))
		for key, item := range v {
			tbl.RawSetH(lua.LString(key), luaValue(l, item))
		}
		return tbl
	}
	return lua.LNil
}

// healthRow is one captured object and the health its script gave it.
type healthRow struct {
	kind, state string
	health      argoHealth
}

// healthRecorder evaluates the health scripts on live objects and keeps a
// row per capture for the test's report.
type healthRecorder struct {
	t       *testing.T
	scripts map[string]string
	rows    []healthRow
}

// live reads obj from the API server as Argo CD sees it, unstructured.
func (h *healthRecorder) live(obj client.Object) map[string]any {
	h.t.Helper()
	u := toUnstructured(h.t, obj)
	if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(obj), u); err != nil {
		h.t.Fatal(err)
	}
	return u.Object
}

// expect waits until the script of obj's kind gives want on the live
// object, then records it under state; message, when set, must appear in
// the health's message.
func (h *healthRecorder) expect(obj client.Object, kind, state, want, message string) {
	h.t.Helper()
	var got argoHealth
	eventually(h.t, 60*time.Second, fmt.Sprintf("%s %s to be %s (%s)", kind, obj.GetName(), want, state), func() (bool, error) {
		got = runHealthScript(h.t, h.scripts[kind], h.live(obj))
		return got.Status == want && strings.Contains(got.Message, message), fmt.Errorf("health %+v", got)
	})
	h.rows = append(h.rows, healthRow{kind, state, got})
}

// table is the rows as a Markdown table.
func (h *healthRecorder) table() string {
	var b strings.Builder
	b.WriteString("| kind | state | health | message |\n|---|---|---|---|\n")
	for _, r := range h.rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.kind, r.state, r.health.Status, r.health.Message)
	}
	return b.String()
}

// TestArgoCDHealthOfLiveObjects drives a ChunkingPolicy, a Corpus and a
// Retriever through the states a user meets and runs the Argo CD health
// scripts of config/argocd on each object as the API server holds it.
func TestArgoCDHealthOfLiveObjects(t *testing.T) {
	h := &healthRecorder{t: t, scripts: map[string]string{}}
	for _, kind := range []string{"ChunkingPolicy", "Corpus", "Retriever"} {
		h.scripts[kind] = healthScript(t, kind)
	}
	ns := newNamespace(t)
	p := newPolicy(t, 800, 160)
	h.expect(p, "ChunkingPolicy", "Ready", "Healthy", "revision ")

	c := gatedCorpus(ns, p.Name, newGolden(t, ns, goldenQueries), v1alpha1.QualityGate{MinHitRate: "0.6", MaxDrop: "0.1"})
	building := watchCorpusHealth(t, c, h.scripts["Corpus"])
	if err := k8s.Create(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	h.expect(c, "Corpus", "Ready on its first revision", "Healthy", "revision ")
	indexing := firstHealth(building(), "Progressing", "building revision")
	if indexing.Status == "" {
		t.Error("no version of the Corpus was Progressing, building a revision, while its first revision was built")
	}
	h.rows = append(h.rows, healthRow{"Corpus", "first revision being indexed (from a watch)", indexing})

	rt := newRetriever(t, ns, "ask", c.Name)
	h.expect(rt, "Retriever", "rolling out, no pod ready", "Progressing", "rolling out revision")
	markDeploymentRolledOut(t, ns, rt.Name)
	h.expect(rt, "Retriever", "every replica serves", "Healthy", "serve revision")

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Sources[0].Inline = sampleDocs()[:1] })
	h.expect(c, "Corpus", "new revision failed the quality gate", "Degraded", "failed the quality gate")

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) {
		c.Spec.Sources[0].Inline = sampleDocs()
		c.Spec.Rollout.Promotion = v1alpha1.PromotionManual
	})
	h.expect(c, "Corpus", "gate fixed, Ready again", "Healthy", "revision ")
	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) {
		c.Spec.Sources[0].Inline = append(sampleDocs(), v1alpha1.InlineDocument{ID: "glaciers", Text: "Glaciers move slowly downhill under their own weight."})
	})
	h.expect(c, "Corpus", "built revision awaits promotion (Manual)", "Suspended", "awaits promotion")

	updateCorpus(t, k8s, c, func(c *v1alpha1.Corpus) { c.Spec.Suspend = true })
	// "waits": the operator's message, once it has seen the suspension.
	h.expect(c, "Corpus", "spec.suspend", "Suspended", "waits")
	get(t, rt)
	patch := client.MergeFrom(rt.DeepCopy())
	rt.Spec.Suspend = true
	if err := k8s.Patch(context.Background(), rt, patch); err != nil {
		t.Fatal(err)
	}
	h.expect(rt, "Retriever", "spec.suspend", "Suspended", "waits")

	orphan := inlineCorpus(ns, uniqueName("no-such-policy"), sampleDocs()...)
	if err := k8s.Create(context.Background(), orphan); err != nil {
		t.Fatal(err)
	}
	h.expect(orphan, "Corpus", "its ChunkingPolicy does not exist (waits)", "Progressing", "not found")

	if err := k8s.Delete(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	h.expect(p, "ChunkingPolicy", "deleted while a Corpus uses it", "Degraded", "deletion waits")
	t.Cleanup(func() {
		for _, o := range []client.Object{rt, c, orphan} {
			_ = k8s.Delete(context.Background(), o)
		}
	})
	t.Logf("Argo CD health of the live objects:\n%s", h.table())
}

// watchCorpusHealth runs the Corpus health script on every version of c a
// watch delivers, until the returned function is called.
func watchCorpusHealth(t *testing.T, c *v1alpha1.Corpus, script string) func() []argoHealth {
	var seen []argoHealth
	stop := watchCorpus(t, c, func(got *v1alpha1.Corpus) (string, bool) {
		seen = append(seen, runHealthScript(t, script, toUnstructured(t, got).Object))
		return "", false
	})
	return func() []argoHealth {
		stop()
		return seen
	}
}

// firstHealth returns the first health with the status whose message
// holds message, or none.
func firstHealth(healths []argoHealth, status, message string) argoHealth {
	for _, h := range healths {
		if h.Status == status && strings.Contains(h.Message, message) {
			return h
		}
	}
	return argoHealth{}
}

// markDeploymentRolledOut writes the status the Deployment controller
// writes once every replica of the query Deployment is updated and
// available; the suite runs no Deployment controller.
func markDeploymentRolledOut(t *testing.T, ns, name string) {
	t.Helper()
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the query Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: name}, &d)
		return err == nil, err
	})
	patch := client.MergeFrom(d.DeepCopy())
	n := *d.Spec.Replicas
	d.Status = appsv1.DeploymentStatus{ObservedGeneration: d.Generation, Replicas: n, UpdatedReplicas: n, ReadyReplicas: n, AvailableReplicas: n,
		Conditions: []appsv1.DeploymentCondition{{Type: appsv1.DeploymentAvailable, Status: "True", Reason: "MinimumReplicasAvailable", LastUpdateTime: metav1.Now(), LastTransitionTime: metav1.Now()}}}
	if err := k8s.Status().Patch(context.Background(), &d, patch); err != nil {
		t.Fatal(err)
	}
}

// TestArgoCDConfigMapPatchHoldsTheScripts checks that the argocd-cm patch
// of config/argocd carries each kind's .lua file under Argo CD's key for
// it, byte for byte, and patches an existing argocd-cm as `kubectl patch
// --patch-file` does (a strategic merge patch), keeping its other keys.
func TestArgoCDConfigMapPatchHoldsTheScripts(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(env.Root, "config", "argocd", "argocd-cm-patch.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var cm unstructured.Unstructured
	if err := yaml.Unmarshal(b, &cm.Object); err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(cm.Object, "data")
	if cm.GetName() != "argocd-cm" || cm.GetNamespace() != "argocd" || len(data) != 3 {
		t.Fatalf("want the argocd-cm ConfigMap of namespace argocd with 3 keys, got %s/%s with %d", cm.GetNamespace(), cm.GetName(), len(data))
	}
	for _, kind := range []string{"ChunkingPolicy", "Corpus", "Retriever"} {
		key := "resource.customizations.health." + v1alpha1.GroupVersion.Group + "_" + kind
		if data[key] != healthScript(t, kind) {
			t.Errorf("%s differs from config/argocd/%s.lua", key, strings.ToLower(kind))
		}
	}
	patched := patchArgoCDConfigMap(t, b)
	if patched.Data["url"] != "https://argocd.example.com" || len(patched.Data) != 4 {
		t.Fatalf("the patched argocd-cm holds %d keys (url %q), want its own and the 3 scripts", len(patched.Data), patched.Data["url"])
	}
	for key, script := range data {
		if patched.Data[key] != script {
			t.Errorf("the patched argocd-cm's %s is not the script", key)
		}
	}
}

// patchArgoCDConfigMap creates an argocd-cm as an Argo CD install has it
// and applies the patch file to it as a strategic merge patch.
func patchArgoCDConfigMap(t *testing.T, patchYAML []byte) *corev1.ConfigMap {
	t.Helper()
	ctx := context.Background()
	if err := k8s.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "argocd"}}); client.IgnoreAlreadyExists(err) != nil {
		t.Fatal(err)
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "argocd", Name: "argocd-cm"}, Data: map[string]string{"url": "https://argocd.example.com"}}
	if err := k8s.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	patch, err := yaml.YAMLToJSON(patchYAML)
	if err != nil {
		t.Fatal(err)
	}
	if err := k8s.Patch(ctx, cm, client.RawPatch(types.StrategicMergePatchType, patch)); err != nil {
		t.Fatalf("kubectl patch --patch-file would fail: %v", err)
	}
	return cm
}

// suspendedStatuses are statuses a suspended object may still hold from
// before, or never have had, each on an object whose generation (3) is
// newer than its status's observedGeneration (2).
var suspendedStatuses = map[string]map[string]any{
	"no status yet": nil,
	"Ready, an older generation": {"observedGeneration": int64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "True", "reason": "Succeeded", "message": "serving revision abc"}}},
	"Reconciling": {"observedGeneration": int64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "Unknown", "reason": "Progressing", "message": "building revision def"},
		map[string]any{"type": "Reconciling", "status": "True", "reason": "Progressing", "message": "building revision def"}}},
	"Stalled": {"observedGeneration": int64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "IndexFailed", "message": "indexing failed"},
		map[string]any{"type": "Stalled", "status": "True", "reason": "IndexFailed", "message": "indexing failed"}}},
	"Ready False": {"observedGeneration": int64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "SourceError", "message": "source unreachable"}}},
	"Suspended by the operator": {"observedGeneration": int64(2), "conditions": []any{
		map[string]any{"type": "Ready", "status": "False", "reason": "Suspended", "message": "reconciliation is suspended (spec.suspend): generation 3 waits"}}},
}

// A Corpus or Retriever with spec.suspend reads Suspended whatever its
// status says, as Argo CD's own script for Flux sources checks
// spec.suspend first: the operator may not have seen the suspension yet,
// or may not be running. With spec.suspend false it is never Suspended
// for want of a promotion, even where the status still says it was.
func TestArgoCDHealthHonoursSpecSuspend(t *testing.T) {
	for _, kind := range []string{"Corpus", "Retriever"} {
		script := healthScript(t, kind)
		for state, status := range suspendedStatuses {
			obj := map[string]any{
				"apiVersion": v1alpha1.GroupVersion.String(), "kind": kind,
				"metadata": map[string]any{"name": "docs", "namespace": "team", "generation": int64(3)},
				"spec":     map[string]any{"suspend": true},
			}
			if status != nil {
				obj["status"] = status
			}
			got := runHealthScript(t, script, obj)
			if got.Status != "Suspended" || !strings.Contains(got.Message, "spec.suspend") {
				t.Errorf("%s with spec.suspend, %s: %+v, want Suspended naming spec.suspend", kind, state, got)
			}
			obj["spec"] = map[string]any{"suspend": false}
			if got := runHealthScript(t, script, obj); got.Status == "Suspended" {
				t.Errorf("%s with spec.suspend false, %s: %+v, want not Suspended", kind, state, got)
			}
		}
	}
}
