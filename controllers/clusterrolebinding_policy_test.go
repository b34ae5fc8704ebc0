package controllers_test

import (
	"context"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/devcluster"
)

// TestTheOperatorCannotTouchOtherClusterRoleBindings acts as the
// operator's ServiceAccount under what config/default ships: RBAC lets it
// create, patch and delete ClusterRoleBindings, and the admission policy
// of config/rbac keeps it to the auth-delegator bindings of its
// Retrievers. Every other request is refused, cluster-admin's included;
// requests are dry runs, so a refusal that fails to happen changes
// nothing.
func TestTheOperatorCannotTouchOtherClusterRoleBindings(t *testing.T) {
	ctx := context.Background()
	mgr, err := client.New(devcluster.ServiceAccountConfig(env.Config, devcluster.ManagerNamespace, devcluster.ManagerServiceAccount), client.Options{Scheme: controllers.NewScheme()})
	if err != nil {
		t.Fatal(err)
	}
	binding := func(name, role string, subject rbacv1.Subject) *rbacv1.ClusterRoleBinding {
		return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role},
			Subjects: []rbacv1.Subject{subject}}
	}
	sa := rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "ask", Namespace: "docs"}
	group := rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:authenticated", APIGroup: rbacv1.GroupName}
	dry := client.DryRunAll
	// The policy is enforced once the API server has loaded it.
	eventually(t, 30*time.Second, "the admission policy to refuse another binding", func() (bool, error) {
		err := mgr.Create(ctx, binding("not-ours", "system:auth-delegator", sa), dry)
		return err != nil && strings.Contains(err.Error(), "only the ClusterRoleBindings of its Retrievers"), err
	})
	if err := mgr.Create(ctx, binding("parentrag:retriever-auth:docs:ask", "system:auth-delegator", sa), dry); err != nil {
		t.Fatalf("the auth-delegator binding of a Retriever is refused: %v", err)
	}
	if err := mgr.Create(ctx, binding("parentrag:retriever-auth:docs:ask", "system:auth-delegator", group), dry); err == nil || !strings.Contains(err.Error(), "only to ServiceAccounts") {
		t.Errorf("binding auth-delegator to a group: %v, want a refusal", err)
	}
	var admin rbacv1.ClusterRoleBinding
	if err := k8s.Get(ctx, client.ObjectKey{Name: "cluster-admin"}, &admin); err != nil {
		t.Fatal(err)
	}
	if err := mgr.Delete(ctx, &admin, dry); err == nil || !strings.Contains(err.Error(), "not cluster-admin") {
		t.Errorf("deleting cluster-admin's binding: %v, want a refusal", err)
	}
	// Another team's binding of the one ClusterRole the operator may bind:
	// RBAC would let the operator add itself to it; the policy does not.
	theirs := binding(uniqueName("their-reviewers"), "system:auth-delegator", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Name: "gateway", Namespace: "ingress"})
	if err := k8s.Create(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	patch := client.MergeFrom(theirs.DeepCopy())
	theirs.Subjects = append(theirs.Subjects, sa)
	if err := mgr.Patch(ctx, theirs, patch, dry); err == nil || !strings.Contains(err.Error(), "not "+theirs.Name) {
		t.Errorf("patching another binding of system:auth-delegator: %v, want a refusal", err)
	}
}
