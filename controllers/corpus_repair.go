package controllers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/kubemeta"
)

// Event reasons of a repair.
const (
	// reasonRevisionRepaired: ConfigMaps of the revision were gone and
	// have been stored again.
	reasonRevisionRepaired = "RevisionRepaired"
	// reasonRevisionConfigMapsMissing: ConfigMaps of the revision are gone
	// and the operator does not store them again (a Milvus Corpus).
	reasonRevisionConfigMapsMissing = "RevisionConfigMapsMissing"
)

// repairRevision stores again the ConfigMaps of the revision the sources
// call for when some that its manifest names are gone (deleted by hand, or
// by a cleanup that matched their labels): the revision is built again,
// byte for byte the same, and store creates what is missing alone
// (cmbundle.Restoring), neither reading nor sending the rest. When the
// build makes other files than the revision holds (another parentrag
// version built it), nothing is stored and a warning says so. A Corpus on
// Milvus is only reported (a build writes its collection). stored is what
// the revision's manifest says; it names no ConfigMaps for a revision on a
// claim, which is not checked. The manifest is read whole only when
// something is missing.
func (r *CorpusReconciler) repairRevision(ctx context.Context, s *corpusState, stored storedRevision) (ctrl.Result, error) {
	missing, err := r.missingConfigMaps(ctx, s.corpus, stored.names)
	if err != nil || len(missing) == 0 {
		return ctrl.Result{}, err
	}
	var manifest corev1.ConfigMap
	if err := r.reader().Get(ctx, client.ObjectKey{Namespace: s.corpus.Namespace, Name: stored.name}, &manifest); err != nil {
		return ctrl.Result{}, fmt.Errorf("reading revision manifest %s: %w", stored.name, err)
	}
	gone := describeMissing(missing)
	log.FromContext(ctx).Info("revision ConfigMaps are missing", "revision", s.revision, "missing", len(missing), "first", missing[0])
	if s.corpus.UsesExternalIndex() {
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeWarning, reasonRevisionConfigMapsMissing, "Repair",
			"revision %s names ConfigMaps that are gone (%s); a Corpus on Milvus does not store them again: delete the revision's manifest %s to build it anew", s.revision, gone, manifest.Name)
		return ctrl.Result{}, nil
	}
	// Not buildUnlessSuperseded: a superseded build discards its revision,
	// and this one is stored, maybe serving. A change of the sources waits
	// for the repair, which mostly reads the unit and segment caches.
	switch err := r.build(ctx, s, manifest.Name, cmbundle.Restoring(&manifest, missing)); {
	case errors.Is(err, cmbundle.ErrOtherFiles):
		r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeWarning, reasonRevisionConfigMapsMissing, "Repair",
			"revision %s names ConfigMaps that are gone (%s), and building it again made other files than it holds (built by another parentrag version?), so nothing was stored: delete the revision's manifest %s to build it anew", s.revision, gone, manifest.Name)
		return ctrl.Result{}, nil
	case err != nil:
		return ctrl.Result{}, fmt.Errorf("storing again the ConfigMaps revision %s lost (%s): %w", s.revision, gone, err)
	}
	r.Recorder.Eventf(s.corpus, nil, corev1.EventTypeNormal, reasonRevisionRepaired, "Repair",
		"stored again the ConfigMaps revision %s lost: %s", s.revision, gone)
	return ctrl.Result{}, nil
}

// missingConfigMaps returns, sorted, those of names (a revision's, see
// storedRevision) that are not stored. It reads the Corpus's ConfigMaps from
// the manager's metadata informer, and asks the API server only about
// those the informer lacks, so the usual check costs no request and a
// shard created a moment ago, which the informer may not hold yet, is
// never taken for missing.
func (r *CorpusReconciler) missingConfigMaps(ctx context.Context, c *v1alpha1.Corpus, names []string) ([]string, error) {
	if len(names) == 0 {
		return nil, nil
	}
	var err error
	if r.MetadataCache != nil {
		if names, err = absentConfigMaps(ctx, r.MetadataCache, c, names); err != nil || len(names) == 0 {
			return nil, err
		}
	}
	return absentConfigMaps(ctx, r.reader(), c, names)
}

// absentConfigMaps returns, sorted, those of names that reader does not
// list among the Corpus's ConfigMaps (labelled with it), as metadata.
func absentConfigMaps(ctx context.Context, reader client.Reader, c *v1alpha1.Corpus, names []string) ([]string, error) {
	list := kubemeta.ConfigMapList()
	if err := reader.List(ctx, list, client.InNamespace(c.Namespace), client.MatchingLabels{cmbundle.LabelCorpus: c.Name}); err != nil {
		return nil, fmt.Errorf("listing the Corpus's ConfigMaps: %w", err)
	}
	stored := make(map[string]bool, len(list.Items))
	for _, cm := range list.Items {
		stored[cm.Name] = true
	}
	var absent []string
	for _, n := range names {
		if !stored[n] {
			absent = append(absent, n)
		}
	}
	slices.Sort(absent)
	return absent, nil
}

// describeMissing names the first few missing ConfigMaps and counts the
// rest, short enough for an event.
func describeMissing(missing []string) string {
	const named = 3
	if len(missing) <= named {
		return strings.Join(missing, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(missing[:named], ", "), len(missing)-named)
}

// corpusOfStoredConfigMap maps a revision's manifest or shard to the
// Corpus whose label it carries, so that one deleted by hand is stored
// again at once rather than at the next resync.
func corpusOfStoredConfigMap(_ context.Context, o client.Object) []ctrl.Request {
	l := o.GetLabels()
	if l[LabelManagedBy] != ManagedByValue || l[cmbundle.LabelCorpus] == "" {
		return nil
	}
	if role := l[cmbundle.LabelRole]; role != cmbundle.RoleShard && role != cmbundle.RoleManifest {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: o.GetNamespace(), Name: l[cmbundle.LabelCorpus]}}}
}

// deletedOnly passes deletions alone: a revision's ConfigMaps are created
// by the reconciler itself, which needs no news of them.
func deletedOnly() predicate.Funcs {
	return predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		UpdateFunc:  func(event.UpdateEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
}
