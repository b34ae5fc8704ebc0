package controllers_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
)

// TestDeletingACorpusScalesItsRetrieversDownFirst deletes a Corpus that a
// Retriever serves: the Retriever scales its Deployment to zero and says
// why, and the Corpus's revisions are deleted only once no query pod runs,
// so no pod restarts into a revision that is gone.
func TestDeletingACorpusScalesItsRetrieversDownFirst(t *testing.T) {
	ns := newNamespace(t)
	_, c := readyCorpus(t, ns)
	rt := newRetriever(t, ns, "ask", c.Name)
	rev := c.Status.ActiveRevision.Name
	rs := startReplicaSet(t, ns, rt.Name, rev)

	if err := k8s.Delete(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the Deployment to be scaled to zero", func() (bool, error) {
		var d appsv1.Deployment
		if err := k8s.Get(context.Background(), client.ObjectKeyFromObject(rt), &d); err != nil {
			return false, err
		}
		return *d.Spec.Replicas == 0, nil
	})
	eventually(t, 30*time.Second, "the Retriever to say its Corpus is being deleted", func() (bool, error) {
		get(t, rt)
		ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Status == "False" && ready.Reason == v1alpha1.ReasonCorpusDeleted &&
			contains(ready.Message, "scaled to 0 replicas"), fmt.Errorf("%+v", ready)
	})
	eventually(t, 30*time.Second, "the Corpus to say what its deletion waits for", func() (bool, error) {
		get(t, c)
		ready := meta.FindStatusCondition(c.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonRetrieversRunning && contains(ready.Message, "Retriever ask"), fmt.Errorf("%+v", ready)
	})
	if len(revisionConfigMaps(t, c, rev)) == 0 {
		t.Fatal("the revision's ConfigMaps were deleted while a query pod still ran it")
	}

	// The Deployment controller scales the ReplicaSet down.
	stopReplicaSet(t, rs)
	eventually(t, 30*time.Second, "the Corpus and its revisions to go", func() (bool, error) {
		err := k8s.Get(context.Background(), client.ObjectKeyFromObject(c), &v1alpha1.Corpus{})
		return apierrors.IsNotFound(err) && len(revisionConfigMaps(t, c, "")) == 0, err
	})
	eventually(t, 30*time.Second, "the Retriever to say its Corpus is gone", func() (bool, error) {
		get(t, rt)
		ready := meta.FindStatusCondition(rt.Status.Conditions, v1alpha1.ConditionReady)
		return ready != nil && ready.Reason == v1alpha1.ReasonCorpusNotFound && contains(ready.Message, "scaled to 0 replicas") &&
			len(rt.Status.LoadedRevisions) == 0, fmt.Errorf("%+v loaded %v", ready, rt.Status.LoadedRevisions)
	})
}
