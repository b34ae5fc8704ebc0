package controllers_test

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// startReplicaSet creates the ReplicaSet that the Deployment controller,
// which this suite does not run, makes for a Retriever's pods of one
// revision: the Deployment's selector and pod template, with that
// revision in its annotation. The test/cluster suite runs the real one.
func startReplicaSet(t *testing.T, ns, retriever, revision string) *appsv1.ReplicaSet {
	t.Helper()
	var d appsv1.Deployment
	eventually(t, 30*time.Second, "the query Deployment", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKey{Namespace: ns, Name: retriever}, &d)
		return err == nil, err
	})
	tmpl := *d.Spec.Template.DeepCopy()
	tmpl.Annotations["parentrag.io/revision"] = revision
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: retriever + "-" + revision[:8], Labels: tmpl.Labels},
		Spec:       appsv1.ReplicaSetSpec{Replicas: ptr.To(int32(1)), Selector: d.Spec.Selector, Template: tmpl},
	}
	if err := k8s.Create(context.Background(), rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

// stopReplicaSet scales a ReplicaSet to zero, as the Deployment
// controller does with an old one once a rollout ends.
func stopReplicaSet(t *testing.T, rs *appsv1.ReplicaSet) {
	t.Helper()
	get(t, rs)
	patch := client.MergeFrom(rs.DeepCopy())
	rs.Spec.Replicas = ptr.To(int32(0))
	if err := k8s.Patch(context.Background(), rs, patch); err != nil {
		t.Fatal(err)
	}
}
