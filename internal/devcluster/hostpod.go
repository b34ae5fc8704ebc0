package devcluster

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// HostPod is how a pod's first container runs on the host: its args and
// environment resolved as the kubelet would resolve them, with every
// volume mount standing in as a host directory.
type HostPod struct {
	// Args are the container's args, each value that lies under a mount
	// path rewritten to lie under the mount's host directory.
	Args []string
	// Env is the container's environment (plain values rewritten like
	// Args, the pod's namespace, Secret keys) and KUBECONFIG, which
	// authenticates as the pod's service account.
	Env []string
	// Mounts maps each volume mount's path to the host directory standing
	// in for the volume: a claim's is the hostPath of the volume it is bound
	// to (StartHostPathProvisioner), an emptyDir's a new directory.
	Mounts map[string]string
}

// HostPod resolves the first container of a pod with spec in namespace.
// It fails on a claim that is not bound to a hostPath volume and on a
// volume of another kind than a claim or an emptyDir. Read-only mounts are
// not enforced. It is not safe to call concurrently with another start of
// the same Env.
func (e *Env) HostPod(ctx context.Context, namespace string, spec *corev1.PodSpec) (*HostPod, error) {
	c := spec.Containers[0]
	mounts, err := e.mountDirs(ctx, namespace, spec, c)
	if err != nil {
		return nil, err
	}
	kubeconfig, err := e.serviceAccountKubeconfig(ctx, namespace, spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	env, err := e.containerEnv(ctx, namespace, c)
	if err != nil {
		return nil, err
	}
	plain := map[string]bool{}
	for _, v := range c.Env {
		plain[v.Name] = v.ValueFrom == nil
	}
	for i, kv := range env {
		if name, value, _ := strings.Cut(kv, "="); plain[name] {
			env[i] = name + "=" + underMount(value, mounts)
		}
	}
	args := make([]string, len(c.Args))
	for i, a := range c.Args {
		if flag, value, ok := strings.Cut(a, "="); ok && strings.HasPrefix(flag, "-") {
			args[i] = flag + "=" + underMount(value, mounts)
		} else {
			args[i] = underMount(a, mounts)
		}
	}
	return &HostPod{Args: args, Env: append(env, "KUBECONFIG="+kubeconfig), Mounts: mounts}, nil
}

// mountDirs maps each mount of the container to a host directory.
func (e *Env) mountDirs(ctx context.Context, namespace string, spec *corev1.PodSpec, c corev1.Container) (map[string]string, error) {
	volumes := map[string]corev1.Volume{}
	for _, v := range spec.Volumes {
		volumes[v.Name] = v
	}
	out := map[string]string{}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		var dir string
		var err error
		switch {
		case !ok:
			return nil, fmt.Errorf("volume mount %s names no volume of the pod", m.Name)
		case v.PersistentVolumeClaim != nil:
			dir, err = e.ClaimDir(ctx, namespace, v.PersistentVolumeClaim.ClaimName)
		case v.EmptyDir != nil:
			dir, err = os.MkdirTemp(e.dir, "emptydir-"+m.Name+"-*")
		default:
			err = fmt.Errorf("volume %s: only claims and emptyDirs run on the host", m.Name)
		}
		if err != nil {
			return nil, err
		}
		if m.SubPath != "" {
			dir += "/" + m.SubPath
		}
		out[m.MountPath] = dir
	}
	return out, nil
}

// underMount rewrites a path under a mount path to lie under the mount's
// host directory, the deepest mount first; other values are returned as
// they are.
func underMount(value string, mounts map[string]string) string {
	paths := make([]string, 0, len(mounts))
	for p := range mounts {
		paths = append(paths, p)
	}
	sort.Slice(paths, func(i, j int) bool { return len(paths[i]) > len(paths[j]) })
	for _, p := range paths {
		if value == p || strings.HasPrefix(value, strings.TrimSuffix(p, "/")+"/") {
			return mounts[p] + value[len(p):]
		}
	}
	return value
}

// PodExit is how a pod's container run on the host ended.
type PodExit struct {
	// ExitCode is the process's exit status.
	ExitCode int
	// Wall is how long it ran.
	Wall time.Duration
	// PeakRSS is its largest resident set size: the last VmHWM read from
	// /proc/<pid>/status, every 50 ms while it runs (Linux only; 0
	// elsewhere). getrusage's maxrss would not do: the child shares the
	// test process's memory until it execs, and Linux keeps that memory's
	// peak in the child's maxrss.
	PeakRSS int64
	// CPU is the user and system time it used.
	CPU time.Duration
	// Log is its output, stdout and stderr together.
	Log string
}

// RunPod runs the first container of a pod on the host with binary, as
// HostPod resolves it, until it exits or ctx ends (which kills it). An
// error means it could not start; how it ended is in the PodExit.
func (e *Env) RunPod(ctx context.Context, binary string, pod *corev1.Pod) (*HostPod, *PodExit, error) {
	hp, err := e.HostPod(ctx, pod.Namespace, &pod.Spec)
	if err != nil {
		return nil, nil, err
	}
	start := time.Now()
	if err := e.startProcessEnv(binary, fmt.Sprintf("pod-%s-%d", pod.Name, len(e.processes)), hp.Args, hp.Env); err != nil {
		return hp, nil, err
	}
	p := e.processes[len(e.processes)-1]
	var peak int64
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
wait:
	for {
		select {
		case <-p.done:
			break wait
		case <-ctx.Done():
			p.cmd.Process.Kill()
			<-p.done
			break wait
		case <-tick.C:
			if hwm, err := peakRSS(p.cmd.Process.Pid); err == nil {
				peak = max(peak, hwm)
			}
		}
	}
	st := p.cmd.ProcessState
	exit := &PodExit{ExitCode: st.ExitCode(), Wall: time.Since(start), CPU: st.UserTime() + st.SystemTime(), PeakRSS: peak}
	data, _ := os.ReadFile(p.log.Name())
	exit.Log = strings.TrimSpace(string(data))
	return hp, exit, nil
}

// peakRSS reads a running process's VmHWM from /proc/<pid>/status.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kib int64
			if _, err := fmt.Sscanf(v, "%d kB", &kib); err != nil {
				return 0, fmt.Errorf("parsing %q: %w", line, err)
			}
			return kib << 10, nil
		}
	}
	return 0, fmt.Errorf("no VmHWM in /proc/%d/status", pid)
}

// StartPodServeMounted is StartPodServe for pods with volumes: it runs
// binary as HostPod resolves the pod's first container, adding only a free
// local port (--addr), so a revision on a claim is served from the claim's
// host directory.
func (e *Env) StartPodServeMounted(ctx context.Context, binary, namespace, name string, spec *corev1.PodSpec) (*ServeProcess, *HostPod, error) {
	hp, err := e.HostPod(ctx, namespace, spec)
	if err != nil {
		return nil, nil, err
	}
	addr, err := freeAddr()
	if err != nil {
		return nil, nil, err
	}
	args := append(append([]string{}, hp.Args...), "--addr="+addr, hostShutdownDelay)
	if err := e.startProcessEnv(binary, fmt.Sprintf("serve-%s-%d", name, len(e.processes)), args, hp.Env); err != nil {
		return nil, nil, err
	}
	return &ServeProcess{URL: "http://" + addr, p: e.processes[len(e.processes)-1]}, hp, nil
}
