package devcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	authv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/internal/server"
)

// BuildBinary builds cmd/parentrag into dir and returns its path.
func (e *Env) BuildBinary(dir string) (string, error) {
	bin := filepath.Join(dir, "parentrag")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/parentrag")
	cmd.Dir = e.Root
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building parentrag: %v\n%s", err, out)
	}
	return bin, nil
}

// ServeProcess is `parentrag serve` started as a pod of a Retriever's
// Deployment would start it.
type ServeProcess struct {
	URL string
	p   *process
}

// StartServe runs binary with the args and env of the Deployment's first
// container, authenticated with a token of the pod's service account from
// the TokenRequest API, so the Role the operator wrote is what lets it read
// the revision. Two things a pod would get from its sandbox are supplied
// here: a free local port (--addr) and a scratch directory (--data-dir),
// appended after the Deployment's own args.
func (e *Env) StartServe(ctx context.Context, binary string, d *appsv1.Deployment) (*ServeProcess, error) {
	return e.StartPodServe(ctx, binary, d.Namespace, d.Name, &d.Spec.Template.Spec)
}

// StartPodServe runs binary as a pod with spec would run it in namespace:
// the first container's args and env, and a token of the pod's service
// account, as StartServe does for a Deployment. name names the process's
// log. It is not safe to call concurrently with another start of the same
// Env.
func (e *Env) StartPodServe(ctx context.Context, binary, namespace, name string, spec *corev1.PodSpec) (*ServeProcess, error) {
	c := spec.Containers[0]
	kubeconfig, err := e.serviceAccountKubeconfig(ctx, namespace, spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	env, err := e.containerEnv(ctx, namespace, c)
	if err != nil {
		return nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp(e.dir, "serve-data-*")
	if err != nil {
		return nil, err
	}
	args := append(append([]string{}, c.Args...), "--addr="+addr, hostShutdownDelay, "--data-dir="+dataDir)
	logName := fmt.Sprintf("serve-%s-%d", name, len(e.processes))
	if err := e.startProcessEnv(binary, logName, args, append(env, "KUBECONFIG="+kubeconfig)); err != nil {
		return nil, err
	}
	return &ServeProcess{URL: "http://" + addr, p: e.processes[len(e.processes)-1]}, nil
}

// Stop ends the server.
func (s *ServeProcess) Stop() { s.p.stop() }

// WaitReady waits until /readyz answers 200, failing early if the server
// exits.
func (s *ServeProcess) WaitReady(timeout time.Duration) error {
	return s.WaitReadyContext(context.Background(), timeout)
}

// WaitReadyContext is WaitReady that also gives up when ctx ends.
func (s *ServeProcess) WaitReadyContext(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		select {
		case <-s.p.done:
			return fmt.Errorf("parentrag serve exited: %v", s.p.cmd.ProcessState)
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := http.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("parentrag serve not ready after %s", timeout)
}

// Retrieve asks the server one question.
func (s *ServeProcess) Retrieve(ctx context.Context, query string, maxParents int) (*server.RetrieveResponse, error) {
	body, _ := json.Marshal(server.RetrieveRequest{Query: query, MaxParents: &maxParents})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.URL+"/v1/retrieve", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		var e server.ErrorResponse
		json.NewDecoder(resp.Body).Decode(&e)
		return nil, fmt.Errorf("retrieve: %s: %s", resp.Status, e.Error)
	}
	var out server.RetrieveResponse
	return &out, json.NewDecoder(resp.Body).Decode(&out)
}

// ServiceAccountKubeconfig writes a kubeconfig that authenticates as the
// service account with a fresh bound token, for a process the test runs
// under that account's RBAC, and returns its path.
func (e *Env) ServiceAccountKubeconfig(ctx context.Context, namespace, sa string) (string, error) {
	return e.serviceAccountKubeconfig(ctx, namespace, sa)
}

// serviceAccountKubeconfig writes a kubeconfig that authenticates as the
// service account with a fresh bound token.
func (e *Env) serviceAccountKubeconfig(ctx context.Context, namespace, sa string) (string, error) {
	token, err := e.serviceAccountToken(ctx, namespace, sa)
	if err != nil {
		return "", err
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["cluster"] = &clientcmdapi.Cluster{Server: e.Config.Host, CertificateAuthorityData: e.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: token}
	cfg.Contexts["sa"] = &clientcmdapi.Context{Cluster: "cluster", AuthInfo: "sa", Namespace: namespace}
	cfg.CurrentContext = "sa"
	path := filepath.Join(e.dir, fmt.Sprintf("%s-%s.kubeconfig", namespace, sa))
	return path, clientcmd.WriteToFile(*cfg, path)
}

// containerEnv resolves the container's environment as the kubelet would:
// plain values, the pod's namespace and Secret keys.
func (e *Env) containerEnv(ctx context.Context, namespace string, c corev1.Container) ([]string, error) {
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TMPDIR=" + os.TempDir()}
	for _, v := range c.Env {
		if v.ValueFrom != nil && v.ValueFrom.ResourceFieldRef != nil {
			// The kubelet gives the container's limit, or the node's
			// allocatable amount without one; the host has no limit to give.
			if lim, ok := c.Resources.Limits[corev1.ResourceName(strings.TrimPrefix(v.ValueFrom.ResourceFieldRef.Resource, "limits."))]; ok {
				env = append(env, v.Name+"="+strconv.FormatInt(lim.Value(), 10))
			}
			continue
		}
		value, err := e.envValue(ctx, namespace, v)
		if err != nil {
			return nil, err
		}
		env = append(env, v.Name+"="+value)
	}
	return env, nil
}

// envValue resolves one variable.
func (e *Env) envValue(ctx context.Context, namespace string, v corev1.EnvVar) (string, error) {
	switch {
	case v.ValueFrom == nil:
		return v.Value, nil
	case v.ValueFrom.FieldRef != nil && v.ValueFrom.FieldRef.FieldPath == "metadata.namespace":
		return namespace, nil
	case v.ValueFrom.SecretKeyRef != nil:
		var s corev1.Secret
		ref := v.ValueFrom.SecretKeyRef
		if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: ref.Name}, &s); err != nil {
			return "", err
		}
		return string(s.Data[ref.Key]), nil
	}
	return "", fmt.Errorf("env %s: unsupported source", v.Name)
}

// freeAddr returns a loopback address with a port nothing listens on.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Log returns a started process's whole log.
func (s *ServeProcess) Log() string {
	data, _ := os.ReadFile(s.p.log.Name())
	return strings.TrimSpace(string(data))
}

// Memory is a process's resident memory as /proc/<pid>/status reports it.
type Memory struct {
	// RSS is the resident set size now (VmRSS).
	RSS int64
	// PeakRSS is the largest RSS so far (VmHWM).
	PeakRSS int64
}

// Memory reads the server's resident memory; it works on Linux only.
func (s *ServeProcess) Memory() (Memory, error) {
	var m Memory
	if s.p.cmd.Process == nil {
		return m, fmt.Errorf("parentrag serve is not running")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", s.p.cmd.Process.Pid))
	if err != nil {
		return m, fmt.Errorf("reading the memory of parentrag serve: %w", err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		var kib int64
		switch {
		case strings.HasPrefix(line, "VmRSS:"):
			_, err = fmt.Sscanf(strings.TrimPrefix(line, "VmRSS:"), "%d kB", &kib)
			m.RSS = kib << 10
		case strings.HasPrefix(line, "VmHWM:"):
			_, err = fmt.Sscanf(strings.TrimPrefix(line, "VmHWM:"), "%d kB", &kib)
			m.PeakRSS = kib << 10
		}
		if err != nil {
			return m, fmt.Errorf("parsing %q: %w", line, err)
		}
	}
	if m.RSS == 0 {
		return m, fmt.Errorf("no VmRSS in /proc/%d/status", s.p.cmd.Process.Pid)
	}
	return m, nil
}

// ServiceAccountClient is a client that acts as a service account, with a
// token from the TokenRequest API, as a pod of that account would.
func (e *Env) ServiceAccountClient(ctx context.Context, namespace, sa string) (client.Client, error) {
	token, err := e.serviceAccountToken(ctx, namespace, sa)
	if err != nil {
		return nil, err
	}
	cfg := &rest.Config{Host: e.Config.Host, BearerToken: token, TLSClientConfig: rest.TLSClientConfig{CAData: e.Config.CAData}}
	return client.New(cfg, client.Options{})
}

// serviceAccountToken requests an hour's token for a service account.
func (e *Env) serviceAccountToken(ctx context.Context, namespace, sa string) (string, error) {
	cs, err := kubernetes.NewForConfig(e.Config)
	if err != nil {
		return "", err
	}
	expiry := int64(3600)
	tr, err := cs.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, sa, &authv1.TokenRequest{Spec: authv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("requesting a token for service account %s/%s: %w", namespace, sa, err)
	}
	return tr.Status.Token, nil
}

// hostShutdownDelay stops a query server on the host at once: it stops
// only when its test ends, and no endpoints route to it that would need
// time to drain.
const hostShutdownDelay = "--shutdown-delay=0s"
