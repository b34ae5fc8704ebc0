//go:build cluster

package cluster_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/internal/devcluster"
)

// fieldOwner is the field manager of what the suite applies, as kubectl
// apply --server-side would write it.
const fieldOwner = "kubectl"

// operatorName is the operator's Deployment in devcluster.ManagerNamespace.
const operatorName = "parentrag-manager"

// deployOperator applies config/default under an overlay as a user writes
// one, with an images: entry for the image under test (the CRDs, the
// shipped RBAC and the manager), and waits until the manager is available.
// Nothing else names the image: query pods and indexing Jobs must run it
// because the operator runs it.
func deployOperator(ctx context.Context) error {
	dir, err := userOverlay(image)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	objs, err := devcluster.RenderKustomization(dir)
	if err != nil {
		return err
	}
	// The CRDs first, then the namespace, then what lives in it.
	var crds, namespaces, rest []*unstructured.Unstructured
	for _, o := range objs {
		switch o.GetKind() {
		case "CustomResourceDefinition":
			crds = append(crds, o)
		case "Namespace":
			namespaces = append(namespaces, o)
		case "Deployment":
			restartOnApply(o)
			rest = append(rest, o)
		default:
			rest = append(rest, o)
		}
	}
	rest = append(namespaces, rest...)
	if err := applyAll(ctx, crds); err != nil {
		return err
	}
	if err := waitEstablished(ctx, crds); err != nil {
		return err
	}
	if err := applyAll(ctx, rest); err != nil {
		return err
	}
	return waitOperatorAvailable(ctx)
}

// restartOnApply stamps the Deployment's pod template as kubectl rollout
// restart does, so that an operator already running from an earlier run
// of the suite is replaced by one of the image just loaded under the same
// name.
func restartOnApply(d *unstructured.Unstructured) {
	annotations, _, _ := unstructured.NestedStringMap(d.Object, "spec", "template", "metadata", "annotations")
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations["kubectl.kubernetes.io/restartedAt"] = time.Now().Format(time.RFC3339)
	if err := unstructured.SetNestedStringMap(d.Object, annotations, "spec", "template", "metadata", "annotations"); err != nil {
		panic(err) // the map holds strings only
	}
}

// userOverlay writes a kustomization over config/default that sets the
// operator's image with an images: entry, and returns its folder.
func userOverlay(img string) (string, error) {
	dir, err := os.MkdirTemp("", "parentrag-overlay-*")
	if err != nil {
		return "", err
	}
	base, err := filepath.Rel(dir, filepath.Join(root, "config", "default"))
	if err != nil {
		return "", err
	}
	name, tag := img, ""
	if i := strings.LastIndex(img, ":"); i > strings.LastIndex(img, "/") {
		name, tag = img[:i], img[i+1:]
	}
	k := fmt.Sprintf("resources:\n- %s\nimages:\n- name: parentrag\n  newName: %s\n", base, name)
	if tag != "" {
		k += "  newTag: " + tag + "\n"
	}
	return dir, os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte(k), 0o644)
}

// applyAll applies objects in order with server-side apply.
func applyAll(ctx context.Context, objs []*unstructured.Unstructured) error {
	for _, o := range objs {
		if err := k8s.Patch(ctx, o, client.Apply, client.FieldOwner(fieldOwner), client.ForceOwnership); err != nil {
			return fmt.Errorf("applying %s %s: %w", o.GetKind(), o.GetName(), err)
		}
	}
	return nil
}

// waitEstablished waits until every CRD is established.
func waitEstablished(ctx context.Context, crds []*unstructured.Unstructured) error {
	for _, u := range crds {
		var last error
		err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
			var crd apiextensionsv1.CustomResourceDefinition
			if last = k8s.Get(ctx, client.ObjectKey{Name: u.GetName()}, &crd); last != nil {
				return false, nil
			}
			for _, c := range crd.Status.Conditions {
				if c.Type == apiextensionsv1.Established && c.Status == apiextensionsv1.ConditionTrue {
					return true, nil
				}
			}
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("CRD %s not established: %w (last error: %v)", u.GetName(), err, last)
		}
	}
	return nil
}

// waitOperatorAvailable waits until the manager's Deployment has rolled
// out its latest spec and its pod is ready.
func waitOperatorAvailable(ctx context.Context) error {
	start := time.Now()
	err := wait.PollUntilContextTimeout(ctx, time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		var d appsv1.Deployment
		if err := k8s.Get(ctx, client.ObjectKey{Namespace: devcluster.ManagerNamespace, Name: operatorName}, &d); err != nil {
			return false, nil
		}
		want := *d.Spec.Replicas
		return d.Status.ObservedGeneration >= d.Generation && d.Status.UpdatedReplicas == want &&
			d.Status.AvailableReplicas == want && d.Status.Replicas == want, nil
	})
	if err != nil {
		return fmt.Errorf("the operator did not become available: %w\n%s", err, podsReport(context.Background(), devcluster.ManagerNamespace))
	}
	fmt.Printf("cluster suite: operator available in %.1fs\n", time.Since(start).Seconds())
	return nil
}

// operatorPod returns the manager's running pod.
func operatorPod(ctx context.Context) (*corev1.Pod, error) {
	var pods corev1.PodList
	if err := k8s.List(ctx, &pods, client.InNamespace(devcluster.ManagerNamespace), client.MatchingLabels{"app.kubernetes.io/component": "manager"}); err != nil {
		return nil, err
	}
	for i := range pods.Items {
		if p := &pods.Items[i]; p.DeletionTimestamp == nil && p.Status.Phase == corev1.PodRunning {
			return p, nil
		}
	}
	return nil, fmt.Errorf("no running operator pod")
}

// TestOperatorMemoryAtIdle reads the in-cluster operator's resident
// memory from its metrics endpoint once the other tests' objects are
// gone, and checks that it fits the memory request config/manager sets.
func TestOperatorMemoryAtIdle(t *testing.T) {
	ctx := context.Background()
	if err := checkReleased(ctx, 3*time.Minute); err != nil {
		t.Fatal(err)
	}
	p, err := operatorPod(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := clientset.CoreV1().Pods(p.Namespace).ProxyGet("http", p.Name, "8080", "/metrics", nil).DoRaw(ctx)
	if err != nil {
		t.Fatalf("reading the operator's metrics: %v", err)
	}
	rss := -1.0
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "process_resident_memory_bytes "); ok {
			rss, _ = strconv.ParseFloat(strings.TrimSpace(v), 64)
		}
	}
	if rss < 0 {
		t.Fatal("no process_resident_memory_bytes in the operator's metrics")
	}
	request := p.Spec.Containers[0].Resources.Requests.Memory().Value()
	t.Logf("operator pod %s: resident memory %.1f MiB (request %d MiB), %d restarts", p.Name, rss/(1<<20), request>>20, restarts([]corev1.Pod{*p}))
	if int64(rss) > request {
		t.Errorf("the idle operator uses %.1f MiB, more than its %d MiB request", rss/(1<<20), request>>20)
	}
}
