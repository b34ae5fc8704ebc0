package devcluster

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/internal/server"
)

// RevisionAnnotation is the pod template annotation that names the
// revision a query pod serves.
const RevisionAnnotation = "parentrag.io/revision"

// Router stands in for the Service in front of a Retriever's pods, whose
// query servers kwok never runs. For each query it lists the pods the
// Service's selector matches that are Ready and not terminating (what the
// EndpointSlices would hold), picks one round-robin and forwards the query
// to the `parentrag serve` process standing in for that pod.
//
// One process runs per distinct pod revision (the pod template annotation
// parentrag.io/revision), started from the first pod of that revision seen,
// with that pod's container args, env and service account: what the pod
// would run. A pod is an endpoint only once its process passed /readyz, as
// a real readiness probe would make it. A process that fails to start is
// recorded (StartErrors) and its pods are never endpoints.
//
// kwok marks a pod Ready as soon as it is scheduled, before the process
// standing in for it has loaded its revision; in a real cluster the
// readiness probe would keep the pod unready, and with maxUnavailable 0 the
// Deployment would keep the old pods serving meanwhile. So when every Ready
// pod is still warming up, the router holds the query until one is ready
// rather than fail it, and counts the hold (Holds). To keep holds short,
// processes are started from a background poll as soon as a pod is
// scheduled, as a kubelet would start its containers.
type Router struct {
	env       *Env
	binary    string
	namespace string
	selector  labels.Selector
	// startTimeout bounds how long a process may take to pass /readyz.
	startTimeout time.Duration

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	// startMu serialises process starts: Env's process list is not safe
	// for concurrent use.
	startMu sync.Mutex

	mu        sync.Mutex
	revisions map[string]*revisionServer
	next      int
	holds     int
	held      time.Duration
}

// revisionServer is the process standing in for every pod of one revision.
type revisionServer struct {
	revision string
	pod      string
	// ready is closed once the process passed /readyz or failed to.
	ready chan struct{}
	srv   *ServeProcess
	err   error
}

// Routed is one answer and the endpoint that gave it.
type Routed struct {
	// Pod is the pod the query was routed to.
	Pod string
	// Revision is that pod's revision annotation.
	Revision string
	Response *server.RetrieveResponse
}

// NewServiceRouter starts a Router for the Service namespace/service,
// selecting pods with the Service's selector, and running binary as the
// query server. Stop it when done.
func (e *Env) NewServiceRouter(ctx context.Context, binary, namespace, service string) (*Router, error) {
	var svc corev1.Service
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: service}, &svc); err != nil {
		return nil, fmt.Errorf("getting the service to route for: %w", err)
	}
	if len(svc.Spec.Selector) == 0 {
		return nil, fmt.Errorf("service %s/%s has no selector", namespace, service)
	}
	ctx, cancel := context.WithCancel(ctx)
	r := &Router{
		env: e, binary: binary, namespace: namespace,
		selector:     labels.SelectorFromSet(svc.Spec.Selector),
		startTimeout: 2 * time.Minute,
		ctx:          ctx, cancel: cancel,
		revisions: map[string]*revisionServer{},
	}
	r.wg.Add(1)
	go r.watch()
	return r, nil
}

// watch starts a process for every new revision of a scheduled pod, every
// 100 ms, until the router stops.
func (r *Router) watch() {
	defer r.wg.Done()
	for {
		pods, err := r.pods()
		if err == nil {
			for i := range pods {
				r.ensure(&pods[i])
			}
		}
		select {
		case <-r.ctx.Done():
			return
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// pods lists the pods the Service selects that are scheduled and not
// terminating, sorted by name.
func (r *Router) pods() ([]corev1.Pod, error) {
	var list corev1.PodList
	if err := r.env.Client.List(r.ctx, &list, client.InNamespace(r.namespace), client.MatchingLabelsSelector{Selector: r.selector}); err != nil {
		return nil, fmt.Errorf("listing the service's pods: %w", err)
	}
	var out []corev1.Pod
	for _, p := range list.Items {
		if p.DeletionTimestamp == nil && p.Spec.NodeName != "" {
			out = append(out, p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ensure returns the process of the pod's revision, starting it in the
// background the first time the revision is seen.
func (r *Router) ensure(p *corev1.Pod) *revisionServer {
	rev := p.Annotations[RevisionAnnotation]
	r.mu.Lock()
	defer r.mu.Unlock()
	if rs, ok := r.revisions[rev]; ok {
		return rs
	}
	rs := &revisionServer{revision: rev, pod: p.Name, ready: make(chan struct{})}
	r.revisions[rev] = rs
	name, spec := p.Name, p.Spec.DeepCopy()
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		defer close(rs.ready)
		rs.srv, rs.err = r.start(name, spec)
	}()
	return rs
}

// start runs the query server of a pod and waits for /readyz.
func (r *Router) start(pod string, spec *corev1.PodSpec) (*ServeProcess, error) {
	r.startMu.Lock()
	srv, err := r.env.StartPodServe(r.ctx, r.binary, r.namespace, pod, spec)
	r.startMu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("starting the query server of pod %s: %w", pod, err)
	}
	if err := srv.WaitReadyContext(r.ctx, r.startTimeout); err != nil {
		return srv, fmt.Errorf("query server of pod %s: %w\n%s", pod, err, srv.Log())
	}
	return srv, nil
}

// Retrieve routes one query to an endpoint and returns its answer with the
// pod that gave it. It fails when the Service has no endpoint, when the
// process of every Ready pod failed to start, or when the query fails.
func (r *Router) Retrieve(ctx context.Context, query string, maxParents int) (*Routed, error) {
	for {
		pods, err := r.pods()
		if err != nil {
			return nil, err
		}
		var endpoints []*corev1.Pod
		var warming []*revisionServer
		var failed []error
		for i := range pods {
			p := &pods[i]
			rs := r.ensure(p)
			if !podReady(p) {
				continue
			}
			select {
			case <-rs.ready:
				if rs.err != nil {
					failed = append(failed, rs.err)
					continue
				}
				endpoints = append(endpoints, p)
			default:
				warming = append(warming, rs)
			}
		}
		if len(endpoints) > 0 {
			return r.forward(ctx, endpoints, query, maxParents)
		}
		if len(warming) == 0 {
			return nil, fmt.Errorf("service has no ready endpoint (%d scheduled pods): %w", len(pods), errors.Join(failed...))
		}
		if err := r.hold(ctx, warming[0]); err != nil {
			return nil, err
		}
	}
}

// forward sends the query to the next endpoint round-robin.
func (r *Router) forward(ctx context.Context, endpoints []*corev1.Pod, query string, maxParents int) (*Routed, error) {
	r.mu.Lock()
	p := endpoints[r.next%len(endpoints)]
	r.next++
	rev := p.Annotations[RevisionAnnotation]
	srv := r.revisions[rev].srv
	r.mu.Unlock()
	resp, err := srv.Retrieve(ctx, query, maxParents)
	if err != nil {
		return nil, fmt.Errorf("pod %s (revision %s): %w", p.Name, rev, err)
	}
	return &Routed{Pod: p.Name, Revision: rev, Response: resp}, nil
}

// hold waits for a warming process and counts the wait.
func (r *Router) hold(ctx context.Context, rs *revisionServer) error {
	start := time.Now()
	select {
	case <-rs.ready:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	r.holds++
	r.held += time.Since(start)
	r.mu.Unlock()
	return nil
}

// podReady reports whether the pod's Ready condition is True.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// Server returns the process of a revision once it passed /readyz, or nil.
func (r *Router) Server(revision string) *ServeProcess {
	r.mu.Lock()
	rs, ok := r.revisions[revision]
	r.mu.Unlock()
	if !ok {
		return nil
	}
	select {
	case <-rs.ready:
		if rs.err == nil {
			return rs.srv
		}
	default:
	}
	return nil
}

// Revisions lists every revision the router has started a process for.
func (r *Router) Revisions() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.revisions))
	for rev := range r.revisions {
		out = append(out, rev)
	}
	sort.Strings(out)
	return out
}

// StartErrors returns why processes failed to start, one error per
// revision, in no particular order.
func (r *Router) StartErrors() []error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []error
	for _, rs := range r.revisions {
		select {
		case <-rs.ready:
			if rs.err != nil {
				out = append(out, fmt.Errorf("revision %s: %w", rs.revision, rs.err))
			}
		default:
		}
	}
	return out
}

// Holds returns how many queries waited for a warming process, and how
// long they waited in all.
func (r *Router) Holds() (int, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.holds, r.held
}

// Stop stops the background poll and every process the router started.
func (r *Router) Stop() {
	r.cancel()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range r.revisions {
		if rs.srv != nil {
			rs.srv.Stop()
		}
	}
}
