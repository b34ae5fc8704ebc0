package devcluster

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// The operator's identity as config/default installs it.
const (
	ManagerNamespace      = "parentrag-system"
	ManagerServiceAccount = "parentrag-manager"
)

// rbacKinds are the objects of config/default that make up the operator's
// identity and permissions, with the admission policy that narrows what it
// may do to ClusterRoleBindings.
var rbacKinds = map[string]bool{
	"Namespace": true, "ServiceAccount": true,
	"ClusterRole": true, "ClusterRoleBinding": true,
	"Role": true, "RoleBinding": true,
	"ValidatingAdmissionPolicy": true, "ValidatingAdmissionPolicyBinding": true,
}

// ManagerConfig installs the operator's ServiceAccount and the RBAC that
// config/default ships, exactly as `kubectl apply -k config/default`
// renders them, and returns a configuration that acts as that
// ServiceAccount. A controller run with it holds the shipped permissions
// and no more, so a missing permission fails the test that needs it.
func (e *Env) ManagerConfig(ctx context.Context) (*rest.Config, error) {
	objs, err := RenderKustomization(filepath.Join(e.Root, "config", "default"))
	if err != nil {
		return nil, err
	}
	// The namespace first, then what lives in it.
	sort.SliceStable(objs, func(i, j int) bool { return objs[i].GetKind() == "Namespace" && objs[j].GetKind() != "Namespace" })
	for _, o := range objs {
		if !rbacKinds[o.GetKind()] {
			continue
		}
		if err := e.Client.Patch(ctx, o, client.Apply, client.FieldOwner("parentrag-test"), client.ForceOwnership); err != nil {
			return nil, fmt.Errorf("applying %s %s from config/default: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return ServiceAccountConfig(e.Config, ManagerNamespace, ManagerServiceAccount), nil
}

// ServiceAccountConfig returns a copy of cfg that impersonates a
// ServiceAccount with the groups the API server gives its tokens.
func ServiceAccountConfig(cfg *rest.Config, namespace, name string) *rest.Config {
	out := rest.CopyConfig(cfg)
	out.Impersonate = rest.ImpersonationConfig{
		UserName: fmt.Sprintf("system:serviceaccount:%s:%s", namespace, name),
		Groups:   []string{"system:serviceaccounts", "system:serviceaccounts:" + namespace, "system:authenticated"},
	}
	return out
}

// RenderKustomization builds the kustomization in dir as
// `kubectl apply -k` would.
func RenderKustomization(dir string) ([]*unstructured.Unstructured, error) {
	res, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kustomize build %s: %w", dir, err)
	}
	var out []*unstructured.Unstructured
	for _, r := range res.Resources() {
		b, err := r.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			return nil, fmt.Errorf("%s: %w", r.CurId(), err)
		}
		out = append(out, u)
	}
	return out, nil
}
