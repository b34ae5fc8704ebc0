package devcluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// FakeNodeName is the node kwok plays.
const FakeNodeName = "kwok-node-0"

// process is a control-plane binary started by the environment.
type process struct {
	name string
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{}
}

// stop ends the process and waits for it.
func (p *process) stop() {
	if p.cmd.Process != nil {
		p.cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	}
	p.log.Close()
}

// StartWorkloads starts kube-controller-manager (Deployment and ReplicaSet
// controllers), kube-scheduler and kwok with one fake node, so that pods
// are created, scheduled and turn Ready without a kubelet. The stage files
// come from $PARENTRAG_KWOK_STAGES (printed by hack/control-plane.sh).
func (e *Env) StartWorkloads(ctx context.Context) error {
	stages, err := kwokStageFiles()
	if err != nil {
		return err
	}
	return e.startWorkloads(ctx, "deployment,replicaset", stages)
}

// startWorkloads starts kube-controller-manager with the controllers,
// kube-scheduler, and kwok with the stages and one fake, schedulable node.
func (e *Env) startWorkloads(ctx context.Context, controllers string, stages []string) error {
	kubeconfig, err := e.adminKubeconfig()
	if err != nil {
		return err
	}
	assets := os.Getenv("KUBEBUILDER_ASSETS")
	starts := []struct {
		name string
		args []string
	}{
		{"kube-controller-manager", []string{"--kubeconfig=" + kubeconfig, "--controllers=" + controllers, "--leader-elect=false", "--secure-port=0"}},
		{"kube-scheduler", []string{"--kubeconfig=" + kubeconfig, "--leader-elect=false", "--secure-port=0"}},
		{"kwok", append([]string{"--kubeconfig=" + kubeconfig, "--manage-single-node=" + FakeNodeName, "--server-address=127.0.0.1:0"}, configFlags(stages)...)},
	}
	for _, s := range starts {
		if err := e.startProcess(filepath.Join(assets, s.name), s.name, s.args); err != nil {
			return err
		}
	}
	node := fakeNode()
	if err := e.Client.Create(ctx, node); err != nil {
		return err
	}
	// The API server taints a new node not-ready; the node lifecycle
	// controller, which this cluster does not run, would lift the taint once
	// kwok reports the node Ready. Lift it here.
	node.Spec.Taints = nil
	return e.Client.Update(ctx, node)
}

// adminKubeconfig writes a kubeconfig for a cluster administrator.
func (e *Env) adminKubeconfig() (string, error) {
	user, err := e.env.AddUser(envtest.User{Name: "parentrag-admin", Groups: []string{"system:masters"}}, nil)
	if err != nil {
		return "", fmt.Errorf("adding an admin user: %w", err)
	}
	data, err := user.KubeConfig()
	if err != nil {
		return "", err
	}
	path := filepath.Join(e.dir, "admin.kubeconfig")
	return path, os.WriteFile(path, data, 0o600)
}

// kwokStageFiles lists the "fast" node and pod stages and the node
// heartbeat.
func kwokStageFiles() ([]string, error) {
	dir := os.Getenv("PARENTRAG_KWOK_STAGES")
	if dir == "" {
		return nil, fmt.Errorf("PARENTRAG_KWOK_STAGES is not set: run `eval \"$(hack/control-plane.sh --print)\"`")
	}
	var files []string
	for _, sub := range []string{"node/fast", "node/heartbeat-with-lease", "pod/fast"} {
		found, err := filepath.Glob(filepath.Join(dir, sub, "*.yaml"))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			if !strings.HasSuffix(f, "kustomization.yaml") {
				files = append(files, f)
			}
		}
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no kwok stage files under %s", dir)
	}
	return files, nil
}

// configFlags turns stage files into kwok --config flags.
func configFlags(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = "--config=" + f
	}
	return out
}

// startProcess starts a binary with its output in a log file beside the
// environment.
func (e *Env) startProcess(bin, name string, args []string) error {
	return e.startProcessEnv(bin, name, args, nil)
}

// startProcessEnv starts a binary with the given environment (the
// current one when nil).
func (e *Env) startProcessEnv(bin, name string, args, env []string) error {
	logFile, err := os.Create(filepath.Join(e.dir, name+".log"))
	if err != nil {
		return err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr, cmd.Env = logFile, logFile, env
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("starting %s: %w", name, err)
	}
	p := &process{name: name, cmd: cmd, log: logFile, done: make(chan struct{})}
	var once sync.Once
	go func() { cmd.Wait(); once.Do(func() { close(p.done) }) }()
	e.processes = append(e.processes, p)
	return nil
}

// LogTail returns the end of a started process's log, for failure messages.
func (e *Env) LogTail(name string, n int) string {
	data, _ := os.ReadFile(filepath.Join(e.dir, name+".log"))
	lines := strings.Split(string(data), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// fakeNode is the node kwok manages: schedulable, with room for many pods.
func fakeNode() *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{
			Name:        FakeNodeName,
			Labels:      map[string]string{"type": "kwok", "kubernetes.io/hostname": FakeNodeName},
			Annotations: map[string]string{"kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0"},
		},
		Status: corev1.NodeStatus{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")},
			Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("32"), corev1.ResourceMemory: resource.MustParse("256Gi"), corev1.ResourcePods: resource.MustParse("110")},
		},
	}
}
