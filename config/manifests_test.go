// Package config_test renders the operator's kustomizations the way
// `kubectl apply -k` does and checks that what comes out hangs together:
// names that refer to each other resolve, the operator holds the
// permissions its controllers use, its container is locked down, and the
// samples are valid custom resources that refer to each other.
//
// It needs no cluster; test/cluster (make test-cluster, hack/kind-e2e.sh)
// is the suite that applies the same manifests to a real one.
package config_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	structuralpruning "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/cli"
	"github.com/parentrag/parentrag/internal/repo"
)

// group is the operator's API group.
const group = "parentrag.io"

// samplePolicy is the ChunkingPolicy of config/samples that its Corpus uses.
const samplePolicy = "parentrag-sample-handbook"

// lastAppliedLimit is the most a `kubectl apply` (client-side) object may
// weigh: the whole object is copied into the
// kubectl.kubernetes.io/last-applied-configuration annotation, and an
// object's annotations may hold at most 256 KiB.
const lastAppliedLimit = 256 << 10

// object is one rendered manifest.
type object struct {
	*unstructured.Unstructured
}

func (o object) key() string {
	if o.GetNamespace() == "" {
		return o.GetKind() + "/" + o.GetName()
	}
	return o.GetKind() + "/" + o.GetNamespace() + "/" + o.GetName()
}

// manifests is a rendered kustomization.
type manifests []object

// find returns the object of kind, namespace and name, or nil.
func (m manifests) find(kind, namespace, name string) *object {
	for i := range m {
		o := &m[i]
		if o.GetKind() == kind && o.GetNamespace() == namespace && o.GetName() == name {
			return o
		}
	}
	return nil
}

// ofKind returns every object of kind.
func (m manifests) ofKind(kind string) []object {
	var out []object
	for _, o := range m {
		if o.GetKind() == kind {
			out = append(out, o)
		}
	}
	return out
}

// repoRoot is the module root.
func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := repo.Root()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// render builds the kustomization in dir (relative to the repository
// root, or absolute) as `kubectl apply -k` would.
func render(t *testing.T, dir string) manifests {
	t.Helper()
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(repoRoot(t), dir)
	}
	k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
	res, err := k.Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		t.Fatalf("kustomize build %s: %v", dir, err)
	}
	var out manifests
	for _, r := range res.Resources() {
		// Through JSON, so that numbers are int64 and float64 as the API
		// server decodes them.
		b, err := r.MarshalJSON()
		if err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			t.Fatalf("%s: %v", r.CurId(), err)
		}
		out = append(out, object{u})
	}
	if len(out) == 0 {
		t.Fatalf("%s renders nothing", dir)
	}
	return out
}

// convert decodes o into a typed object.
func convert[T any](t *testing.T, o object) *T {
	t.Helper()
	var v T
	if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object, &v, true); err != nil {
		t.Fatalf("%s: %v", o.key(), err)
	}
	return &v
}

// managerDeployment returns the operator's Deployment: the one whose pods
// run `manager`.
func managerDeployment(t *testing.T, m manifests) (*appsv1.Deployment, *corev1.Container) {
	t.Helper()
	var found []*appsv1.Deployment
	var container *corev1.Container
	for _, o := range m.ofKind("Deployment") {
		d := convert[appsv1.Deployment](t, o)
		for i, c := range d.Spec.Template.Spec.Containers {
			if len(c.Args) > 0 && c.Args[0] == "manager" {
				found, container = append(found, d), &d.Spec.Template.Spec.Containers[i]
			}
		}
	}
	if len(found) != 1 {
		t.Fatalf("want exactly one Deployment with a container running `manager`, found %d", len(found))
	}
	return found[0], container
}

func TestDefaultIsCoherent(t *testing.T) {
	m := render(t, "config/default")
	deploy, container := managerDeployment(t, m)
	ns := deploy.Namespace

	t.Run("namespaces", func(t *testing.T) {
		if ns == "" {
			t.Fatal("the manager Deployment has no namespace")
		}
		for _, o := range m {
			if n := o.GetNamespace(); n != "" && m.find("Namespace", "", n) == nil {
				t.Errorf("%s is in namespace %s, which config/default does not create", o.key(), n)
			}
		}
		if nsObj := m.find("Namespace", "", ns); nsObj != nil {
			// Both the operator and the query pods it makes meet the
			// restricted Pod Security Standard; say so on the namespace.
			if got := nsObj.GetLabels()["pod-security.kubernetes.io/enforce"]; got != "restricted" {
				t.Errorf("namespace %s: pod-security.kubernetes.io/enforce = %q, want restricted", ns, got)
			}
		}
	})

	t.Run("unique names", func(t *testing.T) {
		seen := map[string]bool{}
		for _, o := range m {
			if seen[o.key()] {
				t.Errorf("%s is rendered twice", o.key())
			}
			seen[o.key()] = true
		}
	})

	t.Run("client-side apply fits", func(t *testing.T) {
		for _, o := range m {
			checkLastApplied(t, o)
		}
	})

	t.Run("crds", func(t *testing.T) {
		want := map[string]struct {
			kind  string
			scope apiextensionsv1.ResourceScope
		}{
			"chunkingpolicies": {"ChunkingPolicy", apiextensionsv1.ClusterScoped},
			"corpora":          {"Corpus", apiextensionsv1.NamespaceScoped},
			"retrievers":       {"Retriever", apiextensionsv1.NamespaceScoped},
		}
		for plural, w := range want {
			o := m.find("CustomResourceDefinition", "", plural+"."+group)
			if o == nil {
				t.Errorf("CustomResourceDefinition %s.%s is not rendered", plural, group)
				continue
			}
			crd := convert[apiextensionsv1.CustomResourceDefinition](t, *o)
			if crd.Spec.Group != group || crd.Spec.Names.Plural != plural || crd.Spec.Names.Kind != w.kind || crd.Spec.Scope != w.scope {
				t.Errorf("%s: group %s, plural %s, kind %s, scope %s; want %s, %s, %s, %s", crd.Name,
					crd.Spec.Group, crd.Spec.Names.Plural, crd.Spec.Names.Kind, crd.Spec.Scope, group, plural, w.kind, w.scope)
			}
			storage := 0
			for _, v := range crd.Spec.Versions {
				if v.Storage {
					storage++
				}
				// The operator writes status with Status().Patch and
				// `kubectl wait --for=condition=Ready` reads it.
				if v.Served && (v.Subresources == nil || v.Subresources.Status == nil) {
					t.Errorf("%s %s: no status subresource", crd.Name, v.Name)
				}
				if v.Served && v.Schema == nil {
					t.Errorf("%s %s: no schema", crd.Name, v.Name)
				}
			}
			if storage != 1 {
				t.Errorf("%s: %d storage versions, want 1", crd.Name, storage)
			}
		}
	})

	t.Run("rbac references", func(t *testing.T) {
		for _, o := range m.ofKind("ClusterRoleBinding") {
			b := convert[rbacv1.ClusterRoleBinding](t, o)
			if b.RoleRef.Kind != "ClusterRole" || m.find("ClusterRole", "", b.RoleRef.Name) == nil {
				t.Errorf("ClusterRoleBinding %s: roleRef %s %s is not a rendered ClusterRole", b.Name, b.RoleRef.Kind, b.RoleRef.Name)
			}
			checkSubjects(t, m, o.key(), b.Subjects)
		}
		for _, o := range m.ofKind("RoleBinding") {
			b := convert[rbacv1.RoleBinding](t, o)
			switch b.RoleRef.Kind {
			case "Role":
				if m.find("Role", b.Namespace, b.RoleRef.Name) == nil {
					t.Errorf("RoleBinding %s/%s: roleRef Role %s is not rendered in %s", b.Namespace, b.Name, b.RoleRef.Name, b.Namespace)
				}
			case "ClusterRole":
				if m.find("ClusterRole", "", b.RoleRef.Name) == nil {
					t.Errorf("RoleBinding %s/%s: roleRef ClusterRole %s is not rendered", b.Namespace, b.Name, b.RoleRef.Name)
				}
			default:
				t.Errorf("RoleBinding %s/%s: roleRef kind %q", b.Namespace, b.Name, b.RoleRef.Kind)
			}
			checkSubjects(t, m, o.key(), b.Subjects)
		}
	})

	t.Run("manager deployment", func(t *testing.T) {
		pod := deploy.Spec.Template.Spec
		sa := pod.ServiceAccountName
		if sa == "" || m.find("ServiceAccount", ns, sa) == nil {
			t.Errorf("serviceAccountName %q is not a rendered ServiceAccount in %s", sa, ns)
		}
		sel, err := metav1.LabelSelectorAsSelector(deploy.Spec.Selector)
		if err != nil || sel.Empty() || !sel.Matches(labels.Set(deploy.Spec.Template.Labels)) {
			t.Errorf("the selector %v does not select the pod template's labels %v", deploy.Spec.Selector, deploy.Spec.Template.Labels)
		}
		if container.Image == "" {
			t.Error("the manager container names no image")
		}
		checkReadsOwnImage(t, container)
		// The image's entrypoint is the parentrag binary (Dockerfile); its
		// args must be a valid `parentrag manager` command line.
		if len(container.Command) > 0 {
			t.Errorf("the manager container overrides the image's entrypoint with %q", container.Command)
		}
		root := cli.NewRootCommand()
		cmd, rest, err := root.Find(container.Args)
		if err != nil || cmd.Name() != "manager" {
			t.Errorf("args %q are not a `parentrag manager` command line: %v", container.Args, err)
		} else if err := cmd.ParseFlags(rest); err != nil {
			t.Errorf("args %q: %v", container.Args, err)
		} else if extra := cmd.Flags().Args(); len(extra) > 0 {
			t.Errorf("args %q: `parentrag manager` takes no arguments, got %q", container.Args, extra)
		}
		checkLockedDown(t, pod, container)
		// Corpora are built in os.MkdirTemp: TMPDIR must be writable.
		tmp := envValue(container, "TMPDIR")
		if tmp == "" {
			tmp = "/tmp"
		}
		if !writableMount(pod, container, tmp) {
			t.Errorf("TMPDIR %s is not on a writable volume, and the root file system is read-only", tmp)
		}
		// The probes must reach the port `parentrag manager` serves them on
		// (--health-probe-bind-address, default :8081).
		probePort := flagPort(container.Args, "--health-probe-bind-address", ":8081")
		for _, p := range []*corev1.Probe{container.LivenessProbe, container.ReadinessProbe} {
			if p == nil || p.HTTPGet == nil {
				t.Error("the manager container needs HTTP liveness and readiness probes")
				continue
			}
			port := p.HTTPGet.Port.String()
			if name := p.HTTPGet.Port.StrVal; name != "" {
				port = ""
				for _, cp := range container.Ports {
					if cp.Name == name {
						port = fmt.Sprint(cp.ContainerPort)
					}
				}
			}
			if port != probePort {
				t.Errorf("probe %s goes to port %q; the manager serves probes on %q", p.HTTPGet.Path, port, probePort)
			}
		}
	})

	t.Run("operator permissions", func(t *testing.T) {
		sa := deploy.Spec.Template.Spec.ServiceAccountName
		clusterRules, nsRules := grantedRules(t, m, ns, sa)
		for _, need := range clusterWideNeeds {
			for _, verb := range need.verbs {
				for _, res := range need.resources {
					if !allows(clusterRules, need.group, res, verb) {
						t.Errorf("the operator may not %s %s in every namespace (%s)", verb, groupResource(need.group, res), need.why)
					}
				}
			}
		}
		all := append(slices.Clone(clusterRules), nsRules...)
		for _, need := range ownNamespaceNeeds(container) {
			for _, verb := range need.verbs {
				for _, res := range need.resources {
					if !allows(all, need.group, res, verb) {
						t.Errorf("the operator may not %s %s in its namespace %s (%s)", verb, groupResource(need.group, res), ns, need.why)
					}
				}
			}
		}
		// No right goes wider than what the code uses.
		for _, r := range clusterRules {
			for _, g := range r.APIGroups {
				for _, res := range r.Resources {
					for _, verb := range r.Verbs {
						if !needed(g, res, verb) && !(res == "clusterroles" && verb == "bind") {
							t.Errorf("the ClusterRole grants %s on %s, which no code of the operator uses", verb, groupResource(g, res))
						}
					}
				}
			}
		}
		// The operator gives each Retriever's pods a Role that reads the
		// revision's ConfigMaps. RBAC lets it create that Role and bind it
		// only if it holds the same permission itself (or escalate/bind).
		if !allows(clusterRules, "", "configmaps", "get") {
			t.Error("the operator cannot grant query pods `get configmaps`: it does not hold that permission itself")
		}
		// It binds system:auth-delegator, whose permissions it does not
		// hold, for Kubernetes-mode Retrievers: bind on that ClusterRole,
		// and on no other.
		if named, any := allowsBindingOnly(clusterRules, authDelegator); !named || any {
			t.Errorf("the operator may bind %s: %v, any ClusterRole: %v; want that one only", authDelegator, named, any)
		}
	})
}

// need is a permission the operator's code uses.
type need struct {
	group     string
	resources []string
	verbs     []string
	why       string
}

// clusterWideNeeds is what controllers/*.go do, in every namespace. It is
// written from the code, not from the +kubebuilder:rbac markers that
// generate config/rbac/role.yaml, so that a marker that goes missing is
// caught.
var clusterWideNeeds = []need{
	// Corpus: reads source ConfigMaps (uncached get, and list for a
	// selector; watched as metadata: list/watch), creates the
	// revision ConfigMaps, lists and deletes old revisions one by one, and
	// all of them in its finalizer. Retriever reads the manifest ConfigMap.
	// The indexer's Role grants patch on its status ConfigMap, which RBAC
	// lets the operator grant only if it holds it.
	{"", []string{"configmaps"}, []string{"get", "list", "watch", "create", "patch", "delete"}, "corpus sources and revisions"},
	// Corpus: the claims of Job-built revisions and the cache claim,
	// created, listed by label and deleted one by one.
	{"", []string{"persistentvolumeclaims"}, []string{"create", "list", "delete"}, "revision and cache claims"},
	// Corpus: indexing Jobs, owned (informer), created, suspended with
	// their cause at the start deadline, deleted with their revision.
	{"batch", []string{"jobs"}, []string{"get", "list", "watch", "create", "patch", "delete"}, "indexing Jobs"},
	// The operator's own pod (its image), and the pods of its Jobs and
	// Retrievers, whose troubles the conditions report (informer).
	{"", []string{"pods"}, []string{"get", "list", "watch"}, "own image, stuck pods"},
	// Retriever: the ReplicaSets of its Deployment say which revisions
	// pods still run (informer).
	{"apps", []string{"replicasets"}, []string{"get", "list", "watch"}, "revisions the query pods run"},
	// Corpus: the OpenAI API key and Milvus Secrets, read by name from the
	// API server (no informer).
	{"", []string{"secrets"}, []string{"get"}, "embedding API key"},
	// Retriever: server-side apply (patch, and create for a new object) of
	// the query ServiceAccount, Role, RoleBinding, Service and Deployment.
	{"", []string{"serviceaccounts", "services"}, []string{"create", "patch"}, "Retriever objects, server-side apply"},
	{"apps", []string{"deployments"}, []string{"create", "patch"}, "Retriever objects, server-side apply"},
	{"rbac.authorization.k8s.io", []string{"roles", "rolebindings"}, []string{"create", "patch"}, "Retriever objects, server-side apply"},
	// Retriever: Owns Deployments, Services and Roles (informers) and Gets
	// the Deployment to read its rollout.
	{"apps", []string{"deployments"}, []string{"get", "list", "watch"}, "Retriever owns and reads its Deployment"},
	{"", []string{"services"}, []string{"get", "list", "watch"}, "Retriever owns its Service"},
	{"rbac.authorization.k8s.io", []string{"roles"}, []string{"get", "list", "watch"}, "Retriever owns its Role"},
	// mgr.GetEventRecorder: the events.k8s.io API.
	{"events.k8s.io", []string{"events"}, []string{"create", "patch"}, "controller events"},
	// The three controllers watch their kinds; ChunkingPolicy and Corpus
	// add and remove finalizers with a patch of metadata.finalizers.
	{group, []string{"chunkingpolicies", "corpora", "retrievers"}, []string{"get", "list", "watch"}, "reconciled kinds"},
	{group, []string{"chunkingpolicies", "corpora"}, []string{"patch"}, "finalizers"},
	// Corpus: reads the Flux source objects of its sourceRef sources
	// (uncached get through the client's cache, and their informers).
	{"source.toolkit.fluxcd.io", []string{"gitrepositories", "ocirepositories", "buckets", "externalartifacts"}, []string{"get", "list", "watch"}, "sourceRef sources"},
	// Status().Patch on all three.
	{group, []string{"chunkingpolicies/status", "corpora/status", "retrievers/status"}, []string{"patch"}, "status"},
	// Owner references with blockOwnerDeletion: the revision ConfigMaps
	// (owned by the Corpus) and the Retriever's objects.
	{group, []string{"corpora/finalizers", "retrievers/finalizers"}, []string{"update"}, "owner references that block deletion"},
	// Retriever: its networkPolicy, applied, owned (informer) and deleted
	// once unset.
	{"networking.k8s.io", []string{"networkpolicies"}, []string{"get", "list", "watch", "create", "patch", "delete"}, "Retriever networkPolicy"},
	// Retriever in Kubernetes auth mode: the auth-delegator binding of its
	// pods, applied and deleted (never read), and the finalizer that
	// deletes it, patched.
	{"rbac.authorization.k8s.io", []string{"clusterrolebindings"}, []string{"create", "patch", "delete"}, "Retriever auth-delegator binding"},
	{group, []string{"retrievers"}, []string{"patch"}, "Retriever auth finalizer"},
}

// needed reports whether clusterWideNeeds has verb on group/res.
func needed(group, res, verb string) bool {
	for _, n := range clusterWideNeeds {
		if n.group == group && slices.Contains(n.resources, res) && slices.Contains(n.verbs, verb) {
			return true
		}
	}
	return false
}

// authDelegator is the one ClusterRole the operator binds, for the query
// pods of Kubernetes-mode Retrievers.
const authDelegator = "system:auth-delegator"

// allowsBindingOnly reports whether rules let their holder bind the
// ClusterRole name, and no other.
func allowsBindingOnly(rules []rbacv1.PolicyRule, name string) (named, any bool) {
	for _, r := range rules {
		if !slices.Contains(r.APIGroups, "rbac.authorization.k8s.io") || !slices.Contains(r.Resources, "clusterroles") ||
			!(slices.Contains(r.Verbs, "bind") || slices.Contains(r.Verbs, "*")) {
			continue
		}
		if len(r.ResourceNames) == 0 {
			any = true
		}
		named = named || slices.Contains(r.ResourceNames, name)
	}
	return named, any
}

// ownNamespaceNeeds is what the manager process needs in its own
// namespace: leader election, when --leader-elect is on.
func ownNamespaceNeeds(c *corev1.Container) []need {
	if !slices.Contains(c.Args, "--leader-elect") && !slices.Contains(c.Args, "--leader-elect=true") {
		return nil
	}
	return []need{
		{"coordination.k8s.io", []string{"leases"}, []string{"get", "create", "update"}, "leader election lease"},
		// controller-runtime's leader election records "became leader"
		// with the deprecated core/v1 event recorder.
		{"", []string{"events"}, []string{"create", "patch"}, "leader election events"},
	}
}

// grantedRules collects the rules bound to the service account: those of
// ClusterRoleBindings (every namespace) and those of RoleBindings in ns.
func grantedRules(t *testing.T, m manifests, ns, sa string) (cluster, namespaced []rbacv1.PolicyRule) {
	t.Helper()
	isSubject := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == ns {
				return true
			}
		}
		return false
	}
	rulesOf := func(kind, namespace, name string) []rbacv1.PolicyRule {
		if kind == "ClusterRole" {
			if o := m.find("ClusterRole", "", name); o != nil {
				return convert[rbacv1.ClusterRole](t, *o).Rules
			}
		} else if o := m.find("Role", namespace, name); o != nil {
			return convert[rbacv1.Role](t, *o).Rules
		}
		return nil
	}
	for _, o := range m.ofKind("ClusterRoleBinding") {
		b := convert[rbacv1.ClusterRoleBinding](t, o)
		if isSubject(b.Subjects) {
			cluster = append(cluster, rulesOf("ClusterRole", "", b.RoleRef.Name)...)
		}
	}
	for _, o := range m.ofKind("RoleBinding") {
		b := convert[rbacv1.RoleBinding](t, o)
		if b.Namespace == ns && isSubject(b.Subjects) {
			namespaced = append(namespaced, rulesOf(b.RoleRef.Kind, b.Namespace, b.RoleRef.Name)...)
		}
	}
	return cluster, namespaced
}

// allows reports whether a rule grants verb on group/resource (any name).
func allows(rules []rbacv1.PolicyRule, group, resource, verb string) bool {
	has := func(list []string, v string) bool {
		return slices.Contains(list, v) || slices.Contains(list, "*")
	}
	for _, r := range rules {
		if len(r.ResourceNames) == 0 && has(r.APIGroups, group) && has(r.Resources, resource) && has(r.Verbs, verb) {
			return true
		}
	}
	return false
}

func groupResource(group, resource string) string {
	if group == "" {
		return resource
	}
	return resource + "." + group
}

// checkSubjects checks that every ServiceAccount a binding names is
// rendered.
func checkSubjects(t *testing.T, m manifests, binding string, subjects []rbacv1.Subject) {
	t.Helper()
	if len(subjects) == 0 {
		t.Errorf("%s binds nobody", binding)
	}
	for _, s := range subjects {
		if s.Kind == "ServiceAccount" && m.find("ServiceAccount", s.Namespace, s.Name) == nil {
			t.Errorf("%s: subject ServiceAccount %s/%s is not rendered", binding, s.Namespace, s.Name)
		}
	}
}

// checkLockedDown checks that the container runs as non-root with a
// read-only root file system, no privilege escalation and no capabilities.
func checkLockedDown(t *testing.T, pod corev1.PodSpec, c *corev1.Container) {
	t.Helper()
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	nonRoot := (sc.RunAsNonRoot != nil && *sc.RunAsNonRoot) ||
		(sc.RunAsNonRoot == nil && pod.SecurityContext != nil && pod.SecurityContext.RunAsNonRoot != nil && *pod.SecurityContext.RunAsNonRoot)
	if !nonRoot {
		t.Error("the manager does not run as non-root (runAsNonRoot)")
	}
	if sc.RunAsUser != nil && *sc.RunAsUser == 0 {
		t.Error("the manager runs as user 0")
	}
	if sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem {
		t.Error("the manager's root file system is not read-only")
	}
	if sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Error("the manager allows privilege escalation")
	}
	if sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") || len(sc.Capabilities.Add) > 0 {
		t.Error("the manager does not drop ALL capabilities")
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil && pod.SecurityContext != nil {
		seccomp = pod.SecurityContext.SeccompProfile
	}
	if seccomp == nil || seccomp.Type != corev1.SeccompProfileTypeRuntimeDefault {
		t.Error("the manager has no RuntimeDefault seccomp profile")
	}
}

// envValue returns the literal value of the container's variable.
// envField is the downward API field path a variable of c comes from.
func envField(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name && e.ValueFrom != nil && e.ValueFrom.FieldRef != nil {
			return e.ValueFrom.FieldRef.FieldPath
		}
	}
	return ""
}

func envValue(c *corev1.Container, name string) string {
	for _, e := range c.Env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// writableMount reports whether dir lies in a volume the container mounts
// read-write.
func writableMount(pod corev1.PodSpec, c *corev1.Container, dir string) bool {
	for _, vm := range c.VolumeMounts {
		if vm.ReadOnly {
			continue
		}
		mp := strings.TrimSuffix(vm.MountPath, "/")
		if dir == mp || strings.HasPrefix(dir, mp+"/") {
			for _, v := range pod.Volumes {
				if v.Name == vm.Name {
					return true
				}
			}
		}
	}
	return false
}

// flagPort returns the port of an address flag (--flag=host:port), or of
// def when the flag is absent.
func flagPort(args []string, flag, def string) string {
	addr := def
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, flag+"="); ok {
			addr = v
		}
	}
	return addr[strings.LastIndex(addr, ":")+1:]
}

// checkLastApplied checks that `kubectl apply` (client-side) can store the
// object in its last-applied annotation.
func checkLastApplied(t *testing.T, o object) {
	t.Helper()
	b, err := json.Marshal(o.Object)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) >= lastAppliedLimit {
		t.Errorf("%s is %d bytes of JSON: `kubectl apply` cannot store it in the last-applied annotation (limit %d)", o.key(), len(b), lastAppliedLimit)
	}
}

// TestClusterOverlaySetsTheImage renders config/cluster, the overlay the
// cluster suite deploys (make test-cluster, hack/kind-e2e.sh), and checks
// that the manager gets the image loaded into the node, never pulled, and
// that nothing else changes.
func TestClusterOverlaySetsTheImage(t *testing.T) {
	const image = "parentrag:cluster"
	m := render(t, "config/cluster")
	_, c := managerDeployment(t, m)
	if c.Image != image {
		t.Errorf("manager image = %q, want %q", c.Image, image)
	}
	checkReadsOwnImage(t, c)
	if c.ImagePullPolicy != corev1.PullIfNotPresent && c.ImagePullPolicy != corev1.PullNever {
		t.Errorf("imagePullPolicy = %q: an image loaded into the node must not be pulled", c.ImagePullPolicy)
	}
	// The overlay changes nothing else: the same objects, and all but the
	// manager Deployment identical.
	orig := render(t, "config/default")
	if len(orig) != len(m) {
		t.Errorf("the overlay renders %d objects, config/default %d", len(m), len(orig))
	}
	for _, o := range orig {
		got := m.find(o.GetKind(), o.GetNamespace(), o.GetName())
		switch {
		case got == nil:
			t.Errorf("the overlay drops %s", o.key())
		case o.GetKind() != "Deployment" && !equality.Semantic.DeepEqual(o.Object, got.Object):
			t.Errorf("the overlay changes %s", o.key())
		}
	}
}

// TestUserOverlaySetsTheImage renders config/default under an overlay as a
// user writes one, with an images: entry. The manager runs that image, and
// nothing in the rendered manifests names another image for query pods or
// indexing Jobs: the operator reads its own image from its pod
// (controllers.OwnImage), which TestOwnImage covers.
func TestUserOverlaySetsTheImage(t *testing.T) {
	const image = "registry.example/parentrag:v1.2.3"
	dir := t.TempDir()
	base, err := filepath.Rel(dir, filepath.Join(repoRoot(t), "config", "default"))
	if err != nil {
		t.Fatal(err)
	}
	overlay := fmt.Sprintf(`resources:
- %s
images:
- name: parentrag
  newName: registry.example/parentrag
  newTag: v1.2.3
`, base)
	if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(overlay), 0o644); err != nil {
		t.Fatal(err)
	}
	m := render(t, dir)
	_, c := managerDeployment(t, m)
	if c.Image != image {
		t.Errorf("manager image = %q, want %q", c.Image, image)
	}
	checkReadsOwnImage(t, c)
	for _, o := range m {
		if raw, _ := json.Marshal(o.Object); strings.Contains(string(raw), "parentrag:dev") {
			t.Errorf("%s still names the placeholder image parentrag:dev", o.key())
		}
	}
}

// checkReadsOwnImage checks that the manager container can read its own
// image from its pod (POD_NAME and POD_NAMESPACE from the downward API)
// and that no variable pins another image for query pods and Jobs.
func checkReadsOwnImage(t *testing.T, c *corev1.Container) {
	t.Helper()
	if v := envValue(c, "PARENTRAG_IMAGE"); v != "" {
		t.Errorf("PARENTRAG_IMAGE = %q: query pods and Jobs would run it whatever image a user sets on the manager", v)
	}
	for name, field := range map[string]string{"POD_NAME": "metadata.name", "POD_NAMESPACE": "metadata.namespace"} {
		if got := envField(c, name); got != field {
			t.Errorf("env %s comes from %q, want the downward API's %s", name, got, field)
		}
	}
	if c.Name != controllers.ManagerContainer {
		t.Errorf("the manager container is named %q; the operator looks for %q in its pod", c.Name, controllers.ManagerContainer)
	}
}

// TestDockerfileFitsTheManifests checks the image the manifests run: its
// entrypoint is the parentrag binary the build stage compiles, and it runs
// as a numeric non-root user, which the kubelet needs to enforce
// runAsNonRoot.
func TestDockerfileFitsTheManifests(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var final []string // instructions of the last stage
	built := false
	for _, line := range strings.Split(string(raw), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if strings.HasPrefix(line, "FROM ") {
			final = nil
		}
		if strings.Contains(line, "go build") && strings.Contains(line, "./cmd/parentrag") {
			built = true
		}
		final = append(final, line)
	}
	if !built {
		t.Error("no stage runs `go build ... ./cmd/parentrag`")
	}
	var entrypoint []string
	user := ""
	copied := map[string]bool{}
	for _, line := range final {
		instr, arg, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "ENTRYPOINT":
			if err := json.Unmarshal([]byte(arg), &entrypoint); err != nil {
				t.Errorf("ENTRYPOINT %s is not in exec form: %v", arg, err)
			}
		case "USER":
			user = arg
		case "COPY":
			f := strings.Fields(arg)
			copied[f[len(f)-1]] = true
		}
	}
	if len(entrypoint) != 1 || filepath.Base(entrypoint[0]) != "parentrag" {
		t.Errorf("ENTRYPOINT %q: want the parentrag binary alone, so that container args are its subcommand", entrypoint)
	} else if dir := filepath.Dir(entrypoint[0]); !copied[entrypoint[0]] && !copied[dir] && !copied[dir+"/"] && !copied["."] {
		t.Errorf("the final stage does not copy %s", entrypoint[0])
	}
	uid, _, _ := strings.Cut(user, ":")
	if !regexp.MustCompile(`^[0-9]+$`).MatchString(uid) || uid == "0" {
		t.Errorf("USER %q: want a numeric non-root user", user)
	}
}

// TestSetImageReachesQueryPods follows docs/operator.md: `kustomize edit
// set image parentrag=...` in config/manager, then `kubectl apply -k
// config/default`. The manager must get the new image, which query pods
// and Jobs then run.
func TestSetImageReachesQueryPods(t *testing.T) {
	const image = "registry.example.com/parentrag:v0.1.0"
	dst := filepath.Join(t.TempDir(), "config")
	if err := os.CopyFS(dst, os.DirFS(filepath.Join(repoRoot(t), "config"))); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dst, "manager", "kustomization.yaml")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var k types.Kustomization
	if err := yaml.UnmarshalStrict(raw, &k); err != nil {
		t.Fatalf("config/manager/kustomization.yaml: %v", err)
	}
	// What `kustomize edit set image parentrag=IMAGE` writes.
	name, tag, _ := strings.Cut(image[strings.LastIndex(image, "/")+1:], ":")
	newName := image[:strings.LastIndex(image, "/")+1] + name
	set := false
	for i := range k.Images {
		if k.Images[i].Name == "parentrag" {
			k.Images[i].NewName, k.Images[i].NewTag, set = newName, tag, true
		}
	}
	if !set {
		k.Images = append(k.Images, types.Image{Name: "parentrag", NewName: newName, NewTag: tag})
	}
	if raw, err = yaml.Marshal(&k); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	_, c := managerDeployment(t, render(t, filepath.Join(dst, "default")))
	if c.Image != image {
		t.Errorf("manager image = %q, want %q", c.Image, image)
	}
	checkReadsOwnImage(t, c)
}

func TestSamplesAreCoherent(t *testing.T) {
	samples := render(t, "config/samples")
	crds := crdsByKind(t, render(t, "config/default"))

	t.Run("no namespace", func(t *testing.T) {
		// They are applied with `kubectl apply -n NS -k config/samples`.
		for _, o := range samples {
			if o.GetNamespace() != "" {
				t.Errorf("%s names a namespace; the samples go wherever -n puts them", o.key())
			}
		}
	})

	t.Run("client-side apply fits", func(t *testing.T) {
		for _, o := range samples {
			checkLastApplied(t, o)
		}
	})

	policy := samples.find("ChunkingPolicy", "", samplePolicy)
	if policy == nil {
		t.Fatal("no ChunkingPolicy " + samplePolicy)
	}
	var docs []object
	for _, o := range samples.ofKind("ConfigMap") {
		if o.GetLabels()["parentrag.io/sample"] == "docs" {
			docs = append(docs, o)
		}
	}
	if len(docs) == 0 {
		t.Fatal("no ConfigMap labelled parentrag.io/sample=docs")
	}
	for _, d := range docs {
		cm := convert[corev1.ConfigMap](t, d)
		if len(cm.Data)+len(cm.BinaryData) == 0 {
			t.Errorf("ConfigMap %s holds no document", cm.Name)
		}
	}

	corpora := samples.ofKind("Corpus")
	if len(corpora) == 0 {
		t.Fatal("no Corpus")
	}
	for _, c := range corpora {
		ref, _, _ := unstructured.NestedString(c.Object, "spec", "chunkingPolicyRef", "name")
		if ref != samplePolicy {
			t.Errorf("Corpus %s uses ChunkingPolicy %q, want %s", c.GetName(), ref, samplePolicy)
		}
		if samples.find("ChunkingPolicy", "", ref) == nil {
			t.Errorf("Corpus %s: ChunkingPolicy %q is not among the samples", c.GetName(), ref)
		}
		sources, _, _ := unstructured.NestedSlice(c.Object, "spec", "sources")
		selects := false
		for _, s := range sources {
			sm, _ := s.(map[string]any)
			raw, ok := sm["selector"]
			if !ok {
				continue
			}
			var ls metav1.LabelSelector
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw.(map[string]any), &ls); err != nil {
				t.Fatalf("Corpus %s: selector: %v", c.GetName(), err)
			}
			sel, err := metav1.LabelSelectorAsSelector(&ls)
			if err != nil {
				t.Fatalf("Corpus %s: selector: %v", c.GetName(), err)
			}
			for _, d := range docs {
				if !sel.Empty() && sel.Matches(labels.Set(d.GetLabels())) {
					selects = true
				}
			}
		}
		if !selects {
			t.Errorf("Corpus %s has no source whose selector picks the parentrag.io/sample=docs ConfigMap", c.GetName())
		}
	}

	retrievers := samples.ofKind("Retriever")
	if len(retrievers) == 0 {
		t.Fatal("no Retriever")
	}
	for _, r := range retrievers {
		ref, _, _ := unstructured.NestedString(r.Object, "spec", "corpusRef", "name")
		if samples.find("Corpus", "", ref) == nil {
			t.Errorf("Retriever %s serves Corpus %q, which is not among the samples", r.GetName(), ref)
		}
	}
	// The cluster suite (test/cluster) waits for these two names and
	// queries the Retriever's Service of the same name.
	if samples.find("Corpus", "", "parentrag-docs") == nil || samples.find("Retriever", "", "parentrag-docs") == nil {
		t.Error("the cluster suite expects a Corpus and a Retriever named parentrag-docs")
	}

	t.Run("schemas", func(t *testing.T) {
		for _, o := range samples {
			gv := o.GroupVersionKind()
			if gv.Group != group {
				continue
			}
			crd, ok := crds[gv.Kind]
			if !ok {
				t.Errorf("%s: no CRD in config/default defines kind %s", o.key(), gv.Kind)
				continue
			}
			for _, msg := range validate(t, crd, o) {
				t.Errorf("%s: %s", o.key(), msg)
			}
		}
	})
}

// crdsByKind indexes the rendered CRDs of the operator's group by kind.
func crdsByKind(t *testing.T, m manifests) map[string]*apiextensionsv1.CustomResourceDefinition {
	t.Helper()
	out := map[string]*apiextensionsv1.CustomResourceDefinition{}
	for _, o := range m.ofKind("CustomResourceDefinition") {
		crd := convert[apiextensionsv1.CustomResourceDefinition](t, o)
		if crd.Spec.Group == group {
			out[crd.Spec.Names.Kind] = crd
		}
	}
	return out
}

// validate checks o against its CRD as the API server would on create:
// the version is served, the scope fits, no field is unknown to the schema
// (kubectl apply refuses them by default), defaults are applied, and then
// the OpenAPI schema and the CEL rules (x-kubernetes-validations) hold.
func validate(t *testing.T, crd *apiextensionsv1.CustomResourceDefinition, o object) []string {
	t.Helper()
	var version *apiextensionsv1.CustomResourceDefinitionVersion
	for i, v := range crd.Spec.Versions {
		if crd.Spec.Group+"/"+v.Name == o.GetAPIVersion() {
			version = &crd.Spec.Versions[i]
		}
	}
	if version == nil || !version.Served {
		return []string{fmt.Sprintf("CRD %s serves no version %s", crd.Name, o.GetAPIVersion())}
	}
	var problems []string
	if crd.Spec.Scope == apiextensionsv1.ClusterScoped && o.GetNamespace() != "" {
		problems = append(problems, "a cluster-scoped kind with a namespace")
	}
	var internal apiextensions.JSONSchemaProps
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(version.Schema.OpenAPIV3Schema, &internal, nil); err != nil {
		t.Fatalf("CRD %s: %v", crd.Name, err)
	}
	structural, err := structuralschema.NewStructural(&internal)
	if err != nil {
		t.Fatalf("CRD %s: not a structural schema: %v", crd.Name, err)
	}
	obj := runtime.DeepCopyJSON(o.Object)
	pruned := structuralpruning.PruneWithOptions(obj, structural, true, structuralschema.UnknownFieldPathOptions{TrackUnknownFieldPaths: true})
	sort.Strings(pruned)
	for _, p := range pruned {
		problems = append(problems, "unknown field "+p)
	}
	structuraldefaulting.Default(obj, structural)
	validator, _, err := validation.NewSchemaValidator(&internal)
	if err != nil {
		t.Fatalf("CRD %s: %v", crd.Name, err)
	}
	for _, e := range validation.ValidateCustomResource(nil, obj, validator) {
		problems = append(problems, e.Error())
	}
	if celValidator := cel.NewValidator(structural, true, celconfig.PerCallLimit); celValidator != nil {
		errs, _ := celValidator.Validate(context.Background(), nil, structural, obj, nil, celconfig.RuntimeCELCostBudget)
		for _, e := range errs {
			problems = append(problems, e.Error())
		}
	}
	return problems
}

// TestValidateCatchesMistakes makes sure the schema check above is not
// vacuous: a misspelt field, a value outside an enum and a broken CEL rule
// in the samples' handbook policy are each reported.
func TestValidateCatchesMistakes(t *testing.T) {
	crds := crdsByKind(t, render(t, "config/default"))
	good := render(t, "config/samples").find("ChunkingPolicy", "", samplePolicy)
	if good == nil {
		t.Fatal("no ChunkingPolicy " + samplePolicy)
	}
	for name, c := range map[string]struct {
		mutate func(map[string]any)
		want   string
	}{
		"unknown field": {func(o map[string]any) { _ = unstructured.SetNestedField(o, int64(300), "spec", "child", "chunkSise") }, "unknown field"},
		"enum":          {func(o map[string]any) { _ = unstructured.SetNestedField(o, "Bogus", "spec", "strategy") }, "Unsupported value"},
		"cel rule":      {func(o map[string]any) { _ = unstructured.SetNestedField(o, int64(2000), "spec", "child", "chunkSize") }, "child.chunkSize"},
		"levels out of order": {func(o map[string]any) {
			_ = unstructured.SetNestedStringSlice(o, []string{"Child", "Parent"}, "spec", "levels")
		}, "levels are listed largest first"},
		"section without its level": {func(o map[string]any) {
			_ = unstructured.SetNestedField(o, map[string]any{"chunkSize": int64(6000)}, "spec", "section")
		}, "add Section to levels"},
		"section beside section parents": {func(o map[string]any) {
			_ = unstructured.SetNestedStringSlice(o, []string{"Section", "Parent", "Child"}, "spec", "levels")
			_ = unstructured.SetNestedField(o, "Sections", "spec", "parent", "boundaries")
		}, "already cuts documents at their headings"},
	} {
		t.Run(name, func(t *testing.T) {
			bad := object{good.DeepCopy()}
			c.mutate(bad.Object)
			problems := validate(t, crds["ChunkingPolicy"], bad)
			if !strings.Contains(strings.Join(problems, "\n"), c.want) {
				t.Errorf("problems %q, want one with %q", problems, c.want)
			}
		})
	}
}

// TestPostgresSampleIsCoherent checks config/samples/postgres: valid
// against the CRDs, no namespace, and the docs Corpus with its children in
// Postgres through the Secret pg-app that docs/cluster.md creates.
func TestPostgresSampleIsCoherent(t *testing.T) {
	samples := render(t, "config/samples/postgres")
	crds := crdsByKind(t, render(t, "config/default"))
	for _, o := range samples {
		if o.GetNamespace() != "" {
			t.Errorf("%s names a namespace; the samples go wherever -n puts them", o.key())
		}
		for _, msg := range validate(t, crds[o.GroupVersionKind().Kind], o) {
			t.Errorf("%s: %s", o.key(), msg)
		}
	}
	c := samples.find("Corpus", "", "parentrag-docs")
	if c == nil {
		t.Fatal("no Corpus parentrag-docs: the Retriever of config/samples expects that name")
	}
	if name, _, _ := unstructured.NestedString(c.Object, "spec", "vectorStore", "postgres", "secretRef", "name"); name != "pg-app" {
		t.Errorf("vectorStore.postgres.secretRef.name = %q, want pg-app, the Secret docs/cluster.md creates", name)
	}
}

// TestMilvusSamplesAreCoherent checks config/samples/milvus as the other
// samples are checked: valid against the CRDs, no namespace, and a Corpus
// that is the docs sample with only its children moved to Milvus, reading a
// Secret of the right shape that comes with it.
func TestMilvusSamplesAreCoherent(t *testing.T) {
	samples := render(t, "config/samples/milvus")
	crds := crdsByKind(t, render(t, "config/default"))
	for _, o := range samples {
		if o.GetNamespace() != "" {
			t.Errorf("%s names a namespace; the samples go wherever -n puts them", o.key())
		}
		checkLastApplied(t, o)
		if gv := o.GroupVersionKind(); gv.Group == group {
			crd, ok := crds[gv.Kind]
			if !ok {
				t.Errorf("%s: no CRD in config/default defines kind %s", o.key(), gv.Kind)
				continue
			}
			for _, msg := range validate(t, crd, o) {
				t.Errorf("%s: %s", o.key(), msg)
			}
		}
	}
	c := samples.find("Corpus", "", "parentrag-docs")
	if c == nil {
		t.Fatal("no Corpus parentrag-docs: the Retriever of config/samples expects that name")
	}
	milvus, _, _ := unstructured.NestedMap(c.Object, "spec", "vectorStore", "milvus")
	if milvus["address"] != "milvus.milvus.svc:19530" {
		t.Errorf("vectorStore.milvus.address = %v, want milvus.milvus.svc:19530 (a Milvus standalone Service named milvus in namespace milvus)", milvus["address"])
	}
	if p, _, _ := unstructured.NestedString(c.Object, "spec", "deletionPolicy"); p != "Delete" {
		t.Errorf("deletionPolicy = %q, want Delete", p)
	}
	// The Secret it names comes with it and holds a token, or a user name
	// and a password.
	name, _, _ := unstructured.NestedString(c.Object, "spec", "vectorStore", "milvus", "secretRef", "name")
	if s := samples.find("Secret", "", name); s == nil {
		t.Errorf("secretRef %q is not a Secret of config/samples/milvus", name)
	} else {
		secret := convert[corev1.Secret](t, *s)
		has := func(k string) bool { _, d := secret.Data[k]; _, sd := secret.StringData[k]; return d || sd }
		if !has("token") && !(has("username") && has("password")) {
			t.Errorf("Secret %s holds neither token nor username and password", name)
		}
	}
	// Applied over config/samples it changes only where the children go.
	base := render(t, "config/samples").find("Corpus", "", "parentrag-docs")
	if base == nil {
		t.Fatal("config/samples has no Corpus parentrag-docs")
	}
	variant := c.DeepCopy()
	unstructured.RemoveNestedField(variant.Object, "spec", "vectorStore")
	unstructured.RemoveNestedField(variant.Object, "spec", "deletionPolicy")
	if !equality.Semantic.DeepEqual(base.Object, variant.Object) {
		t.Errorf("the Milvus Corpus differs from config/samples' beyond vectorStore and deletionPolicy:\n%v\n%v", variant.Object, base.Object)
	}
}

// TestClusterRoleBindingPolicyNamesTheOperator checks the admission policy
// that keeps the operator to its Retrievers' ClusterRoleBindings: it
// matches the ServiceAccount the manager runs as, and its binding names
// the policy as rendered.
func TestClusterRoleBindingPolicyNamesTheOperator(t *testing.T) {
	m := render(t, "config/default")
	deploy, _ := managerDeployment(t, m)
	user := fmt.Sprintf("system:serviceaccount:%s:%s", deploy.Namespace, deploy.Spec.Template.Spec.ServiceAccountName)
	policies, bindings := m.ofKind("ValidatingAdmissionPolicy"), m.ofKind("ValidatingAdmissionPolicyBinding")
	if len(policies) != 1 || len(bindings) != 1 {
		t.Fatalf("%d policies and %d bindings, want one of each", len(policies), len(bindings))
	}
	raw, _ := json.Marshal(policies[0].Object)
	if !strings.Contains(string(raw), "'"+user+"'") {
		t.Errorf("the policy does not match the operator's user %s: %s", user, raw)
	}
	if name, _, _ := unstructured.NestedString(bindings[0].Object, "spec", "policyName"); name != policies[0].GetName() {
		t.Errorf("the binding names policy %q, rendered as %q", name, policies[0].GetName())
	}
}
