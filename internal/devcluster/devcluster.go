// Package devcluster starts a real control plane for tests and the demo:
// kube-apiserver and etcd through envtest, with parentrag's CRDs installed,
// and on request the
// kube-controller-manager, kube-scheduler and a kwok fake node, so that
// Deployments get real ReplicaSets and pods that turn Ready.
//
// The binaries come from hack/control-plane.sh, which `make test` and
// .ci/run call first; KUBEBUILDER_ASSETS points at them.
//
// RevisionParents reads back which parents a revision's ConfigMaps hold,
// for tests that check the answers of the query servers it starts.
package devcluster

import (
	"fmt"
	"os"
	"path/filepath"

	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/parentrag/parentrag/controllers"
	"github.com/parentrag/parentrag/internal/repo"
)

// Env is a running control plane.
type Env struct {
	env    *envtest.Environment
	Config *rest.Config
	Client client.Client
	// Root is the repository root.
	Root      string
	processes []*process
	dir       string
}

// Start starts kube-apiserver and etcd with the CRDs of config/crd/bases.
// It fails, naming the fix, when KUBEBUILDER_ASSETS does not point at the
// control-plane binaries.
func Start() (*Env, error) {
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	if assets == "" {
		return nil, fmt.Errorf("KUBEBUILDER_ASSETS is not set: run `eval \"$(hack/control-plane.sh --print)\"` (make test does)")
	}
	if _, err := os.Stat(filepath.Join(assets, "kube-apiserver")); err != nil {
		return nil, fmt.Errorf("no kube-apiserver in KUBEBUILDER_ASSETS=%s: run hack/control-plane.sh", assets)
	}
	root, err := repo.Root()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "parentrag-devcluster-*")
	if err != nil {
		return nil, err
	}
	e := &Env{Root: root, dir: dir, env: &envtest.Environment{
		CRDDirectoryPaths:     []string{filepath.Join(root, "config", "crd", "bases")},
		ErrorIfCRDPathMissing: true,
		BinaryAssetsDirectory: assets,
	}}
	if e.Config, err = e.env.Start(); err != nil {
		return nil, fmt.Errorf("starting the control plane: %w", err)
	}
	if e.Client, err = client.New(e.Config, client.Options{Scheme: controllers.NewScheme()}); err != nil {
		e.Stop()
		return nil, err
	}
	return e, nil
}

// Stop stops every process the environment started.
func (e *Env) Stop() error {
	for i := len(e.processes) - 1; i >= 0; i-- {
		e.processes[i].stop()
	}
	err := e.env.Stop()
	os.RemoveAll(e.dir)
	return err
}
