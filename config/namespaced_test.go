package config_test

import (
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
)

// TestNamespacedInstallGrantsOneNamespace checks config/namespaced: the
// manager watches one namespace, may do there all that the operator's
// code needs, and holds cluster-wide only the cluster-scoped
// ChunkingPolicies and ClusterRoleBindings, bind on system:auth-delegator,
// and events.
func TestNamespacedInstallGrantsOneNamespace(t *testing.T) {
	const watched = "docs"
	m := render(t, "config/namespaced")
	deploy, container := managerDeployment(t, m)
	if !slices.Contains(container.Args, "--watch-namespace="+watched) {
		t.Fatalf("manager args %q, want --watch-namespace=%s", container.Args, watched)
	}
	sa := deploy.Spec.Template.Spec.ServiceAccountName
	isSubject := func(subjects []rbacv1.Subject) bool {
		for _, s := range subjects {
			if s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == deploy.Namespace {
				return true
			}
		}
		return false
	}
	var cluster, inWatched []rbacv1.PolicyRule
	for _, o := range m.ofKind("ClusterRoleBinding") {
		if b := convert[rbacv1.ClusterRoleBinding](t, o); isSubject(b.Subjects) {
			cluster = append(cluster, convert[rbacv1.ClusterRole](t, *m.find("ClusterRole", "", b.RoleRef.Name)).Rules...)
		}
	}
	for _, o := range m.ofKind("RoleBinding") {
		b := convert[rbacv1.RoleBinding](t, o)
		if b.Namespace != watched || !isSubject(b.Subjects) || b.RoleRef.Kind != "Role" {
			continue
		}
		role := m.find("Role", watched, b.RoleRef.Name)
		if role == nil {
			t.Fatalf("RoleBinding %s/%s refers to Role %s, which is not rendered", b.Namespace, b.Name, b.RoleRef.Name)
		}
		inWatched = append(inWatched, convert[rbacv1.Role](t, *role).Rules...)
	}
	for _, need := range clusterWideNeeds {
		for _, res := range need.resources {
			clusterScoped := clusterScopedResource(res)
			for _, verb := range need.verbs {
				switch {
				case clusterScoped && !allows(cluster, need.group, res, verb):
					t.Errorf("the operator may not %s %s cluster-wide (%s)", verb, groupResource(need.group, res), need.why)
				case !clusterScoped && !allows(inWatched, need.group, res, verb):
					t.Errorf("the operator may not %s %s in namespace %s (%s)", verb, groupResource(need.group, res), watched, need.why)
				}
			}
		}
	}
	if named, any := allowsBindingOnly(cluster, authDelegator); !named || any {
		t.Errorf("the ClusterRole lets the operator bind %s: %v, any ClusterRole: %v; want that one only", authDelegator, named, any)
	}
	for _, r := range cluster {
		for _, res := range r.Resources {
			if !clusterScopedResource(res) && res != "events" && res != "clusterroles" {
				t.Errorf("the ClusterRole grants %v on %s: only ChunkingPolicies, ClusterRoleBindings, the auth-delegator ClusterRole and events belong there", r.Verbs, groupResource(r.APIGroups[0], res))
			}
		}
	}
}

// clusterScopedResource reports whether the operator's need for res can
// only be granted cluster-wide: ChunkingPolicies, and the ClusterRoleBindings
// of Kubernetes-mode Retrievers.
func clusterScopedResource(res string) bool {
	return strings.HasPrefix(res, "chunkingpolicies") || res == "clusterrolebindings"
}
