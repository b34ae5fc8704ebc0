package devcluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// HostPathStorageClass is the StorageClass whose claims
// StartHostPathProvisioner provisions as directories on the host.
const HostPathStorageClass = "devcluster-hostpath"

// hostPathProvisioner names the provisioner of HostPathStorageClass.
const hostPathProvisioner = "devcluster.parentrag.io/hostpath"

// StartHostPathProvisioner creates HostPathStorageClass and, until ctx
// ends, provisions each of its claims as an external provisioner would: a
// new directory beside the environment and a PersistentVolume whose
// hostPath is that directory, pre-bound to the claim, which the
// persistentvolume-binder controller then binds (StartJobWorkloads runs
// it). Each claim gets its own directory, kept until the environment
// stops; HostPod resolves a pod's claims to them.
func (e *Env) StartHostPathProvisioner(ctx context.Context) error {
	class := &storagev1.StorageClass{
		ObjectMeta:        metav1.ObjectMeta{Name: HostPathStorageClass},
		Provisioner:       hostPathProvisioner,
		ReclaimPolicy:     ptr.To(corev1.PersistentVolumeReclaimRetain),
		VolumeBindingMode: ptr.To(storagev1.VolumeBindingImmediate),
	}
	if err := e.Client.Create(ctx, class); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("creating StorageClass %s: %w", HostPathStorageClass, err)
	}
	go func() {
		for {
			e.provisionClaims(ctx)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return nil
}

// provisionClaims provisions every unbound claim of HostPathStorageClass
// that has no volume yet; failures are retried on the next poll.
func (e *Env) provisionClaims(ctx context.Context) {
	var claims corev1.PersistentVolumeClaimList
	if err := e.Client.List(ctx, &claims); err != nil {
		return
	}
	for i := range claims.Items {
		pvc := &claims.Items[i]
		if ptr.Deref(pvc.Spec.StorageClassName, "") != HostPathStorageClass || pvc.Spec.VolumeName != "" || pvc.DeletionTimestamp != nil {
			continue
		}
		e.provision(ctx, pvc)
	}
}

// provision creates the directory and the volume of one claim; a volume
// that exists already is kept.
func (e *Env) provision(ctx context.Context, pvc *corev1.PersistentVolumeClaim) error {
	dir := filepath.Join(e.dir, "volumes", pvc.Namespace+"_"+pvc.Name+"_"+string(pvc.UID)[:8])
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	pv := &corev1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pvc-" + string(pvc.UID), Annotations: map[string]string{"pv.kubernetes.io/provisioned-by": hostPathProvisioner}},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: pvc.Spec.Resources.Requests[corev1.ResourceStorage]},
			AccessModes:                   pvc.Spec.AccessModes,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			StorageClassName:              HostPathStorageClass,
			VolumeMode:                    pvc.Spec.VolumeMode,
			ClaimRef:                      &corev1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: pvc.Namespace, Name: pvc.Name, UID: pvc.UID},
			PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{
				Path: dir, Type: ptr.To(corev1.HostPathDirectory),
			}},
		},
	}
	if err := e.Client.Create(ctx, pv); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("provisioning claim %s/%s: %w", pvc.Namespace, pvc.Name, err)
	}
	return nil
}

// ClaimDir returns the host directory of a bound claim's volume.
func (e *Env) ClaimDir(ctx context.Context, namespace, claim string) (string, error) {
	var pvc corev1.PersistentVolumeClaim
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: claim}, &pvc); err != nil {
		return "", fmt.Errorf("reading claim %s: %w", claim, err)
	}
	if pvc.Spec.VolumeName == "" || pvc.Status.Phase != corev1.ClaimBound {
		return "", fmt.Errorf("claim %s/%s is not bound (phase %s)", namespace, claim, pvc.Status.Phase)
	}
	var pv corev1.PersistentVolume
	if err := e.Client.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, &pv); err != nil {
		return "", fmt.Errorf("reading volume %s of claim %s: %w", pvc.Spec.VolumeName, claim, err)
	}
	if pv.Spec.HostPath == nil {
		return "", fmt.Errorf("volume %s of claim %s/%s is not a hostPath volume", pv.Name, namespace, claim)
	}
	return pv.Spec.HostPath.Path, nil
}
