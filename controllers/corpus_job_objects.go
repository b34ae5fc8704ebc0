package controllers

import (
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"k8s.io/utils/ptr"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/cmbundle"
	"github.com/parentrag/parentrag/internal/indexjob"
)

// Paths inside an indexing Job's pod.
const (
	jobVolume       = "/var/lib/parentrag/revision"
	jobActiveVolume = "/var/lib/parentrag/active"
	jobCacheDir     = "/var/cache/parentrag"
	// roleIndexStatus labels the ConfigMap an indexing Job reports in.
	roleIndexStatus = "index-status"
	rolePlan        = "index-plan"
)

// jobObjects names what one revision built by a Job consists of.
type jobObjects struct {
	claim, plan, status, job string
}

// jobObjectsOf names the objects of a revision of c.
func jobObjectsOf(c *v1alpha1.Corpus, revision string) jobObjects {
	base := c.RevisionObjectName(revision)
	return jobObjects{claim: base, plan: base + "-plan", status: base + "-status", job: base + "-index"}
}

// indexerName names the indexing Jobs' ServiceAccount, Role and binding.
func indexerName(c *v1alpha1.Corpus) string { return c.Name + "-indexer" }

// cacheClaimName names the claim that keeps a Corpus's unit cache and
// embedding cache between indexing Jobs (named for the embedding cache,
// which it held first).
func cacheClaimName(c *v1alpha1.Corpus) string { return c.Name + "-embedding-cache" }

// revisionLabels label every object of a revision.
func revisionLabels(c *v1alpha1.Corpus, revision, role string) map[string]string {
	l := map[string]string{LabelManagedBy: ManagedByValue, cmbundle.LabelCorpus: c.Name, cmbundle.LabelRevision: revision}
	if role != "" {
		l[cmbundle.LabelRole] = role
	}
	return l
}

// planConfigMap holds the plan of a revision.
func planConfigMap(c *v1alpha1.Corpus, plan *indexjob.Plan, names jobObjects) *corev1.ConfigMap {
	return &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: names.plan, Labels: revisionLabels(c, plan.Revision, rolePlan)},
		Data:       map[string]string{indexjob.PlanKey: indexjob.Encode(plan)},
		Immutable:  ptr.To(true),
	}
}

// statusConfigMap is where a revision's Job reports; it starts empty.
func statusConfigMap(c *v1alpha1.Corpus, revision string, names jobObjects) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: names.status, Labels: revisionLabels(c, revision, roleIndexStatus)}}
}

// claim is a PersistentVolumeClaim as the parent store asks.
func claim(c *v1alpha1.Corpus, name string, labels map[string]string) *corev1.PersistentVolumeClaim {
	spec := c.Spec.ParentStore.PersistentVolumeClaim
	modes := spec.AccessModes
	if len(modes) == 0 {
		modes = []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce}
	}
	return &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: name, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: modes, StorageClassName: spec.StorageClassName,
			Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: spec.Size}},
		},
	}
}

// indexerRole lets an indexing Job read its plan, the ConfigMaps and
// Secrets the plan reads (sources and their credentials, nothing else) and
// report in its status ConfigMap.
func indexerRole(c *v1alpha1.Corpus, names jobObjects, sources, secrets []string) *rbacv1ac.RoleApplyConfiguration {
	rules := []*rbacv1ac.PolicyRuleApplyConfiguration{
		rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithVerbs("get").WithResourceNames(append([]string{names.plan}, sources...)...),
		rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("configmaps").WithVerbs("get", "patch").WithResourceNames(names.status),
	}
	if len(secrets) > 0 {
		rules = append(rules, rbacv1ac.PolicyRule().WithAPIGroups("").WithResources("secrets").WithVerbs("get").WithResourceNames(secrets...))
	}
	return rbacv1ac.Role(indexerName(c), c.Namespace).WithLabels(corpusLabels(c)).WithOwnerReferences(corpusOwner(c)).WithRules(rules...)
}

// indexerServiceAccount is the identity of the indexing Jobs.
func indexerServiceAccount(c *v1alpha1.Corpus) *corev1ac.ServiceAccountApplyConfiguration {
	return corev1ac.ServiceAccount(indexerName(c), c.Namespace).WithLabels(corpusLabels(c)).WithOwnerReferences(corpusOwner(c))
}

// indexerRoleBinding grants the indexer role to its service account.
func indexerRoleBinding(c *v1alpha1.Corpus) *rbacv1ac.RoleBindingApplyConfiguration {
	return rbacv1ac.RoleBinding(indexerName(c), c.Namespace).WithLabels(corpusLabels(c)).WithOwnerReferences(corpusOwner(c)).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("Role").WithName(indexerName(c))).
		WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(indexerName(c)).WithNamespace(c.Namespace))
}

// corpusLabels label the objects a Corpus owns across revisions.
func corpusLabels(c *v1alpha1.Corpus) map[string]string {
	return map[string]string{LabelManagedBy: ManagedByValue, cmbundle.LabelCorpus: c.Name}
}

// corpusOwner is the controller reference to the Corpus.
func corpusOwner(c *v1alpha1.Corpus) *metav1ac.OwnerReferenceApplyConfiguration {
	return controllerRef("Corpus", c)
}

// IndexArgs are the arguments of an indexing Job's container. The
// end-to-end test runs `parentrag index` with exactly these.
func IndexArgs(c *v1alpha1.Corpus, revision string, active bool) []string {
	args := []string{"index", "--plan-configmap=" + jobObjectsOf(c, revision).plan, "--volume=" + jobVolume}
	if active {
		args = append(args, "--active-volume="+jobActiveVolume)
	}
	return append(args, "--embedding-cache-dir="+jobCacheDir)
}

// indexJob runs `parentrag index` for a revision: non-root, read-only root
// file system, no privilege escalation, no capabilities; the revision's
// claim and the Corpus's cache claim read-write, the active one's
// read-only.
func indexJob(c *v1alpha1.Corpus, revision, image, activeClaim string, env []corev1.EnvVar) *batchv1.Job {
	names := jobObjectsOf(c, revision)
	idx := c.Spec.Indexing
	if idx == nil {
		idx = &v1alpha1.Indexing{}
	}
	volumes := []corev1.Volume{
		claimVolume("revision", names.claim, false),
		{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
	}
	mounts := []corev1.VolumeMount{{Name: "revision", MountPath: jobVolume}, {Name: "tmp", MountPath: "/tmp"}}
	if activeClaim != "" {
		volumes = append(volumes, claimVolume("active", activeClaim, true))
		mounts = append(mounts, corev1.VolumeMount{Name: "active", MountPath: jobActiveVolume, ReadOnly: true})
	}
	volumes = append(volumes, claimVolume("cache", cacheClaimName(c), false))
	mounts = append(mounts, corev1.VolumeMount{Name: "cache", MountPath: jobCacheDir})
	container := corev1.Container{
		Name: "index", Image: image, Args: IndexArgs(c, revision, activeClaim != ""),
		Env: append([]corev1.EnvVar{
			{Name: "TMPDIR", Value: "/tmp"},
			{Name: "POD_NAMESPACE", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}}},
			// The Go runtime collects harder near the memory limit instead
			// of being killed at it.
			{Name: "GOMEMLIMIT", ValueFrom: &corev1.EnvVarSource{ResourceFieldRef: &corev1.ResourceFieldSelector{ContainerName: "index", Resource: "limits.memory"}}},
		}, env...),
		Resources:    jobResources(idx),
		VolumeMounts: mounts,
		SecurityContext: &corev1.SecurityContext{
			AllowPrivilegeEscalation: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true), RunAsNonRoot: ptr.To(true),
			Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
		},
	}
	return &batchv1.Job{
		ObjectMeta: metav1.ObjectMeta{Namespace: c.Namespace, Name: names.job, Labels: revisionLabels(c, revision, "")},
		Spec: batchv1.JobSpec{
			BackoffLimit:          ptr.To(ptr.Deref(idx.BackoffLimit, 2)),
			ActiveDeadlineSeconds: ptr.To(ptr.Deref(idx.ActiveDeadlineSeconds, 3600)),
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: revisionLabels(c, revision, "")},
				Spec: corev1.PodSpec{
					RestartPolicy: corev1.RestartPolicyNever, ServiceAccountName: indexerName(c), AutomountServiceAccountToken: ptr.To(true),
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: ptr.To(true), SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers:      []corev1.Container{container},
					Volumes:         volumes,
				},
			},
		},
	}
}

// claimVolume mounts a claim.
func claimVolume(name, claim string, readOnly bool) corev1.Volume {
	return corev1.Volume{Name: name, VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: claim, ReadOnly: readOnly}}}
}

// jobResources are the Corpus's, or requests of 500m CPU and 512Mi.
func jobResources(idx *v1alpha1.Indexing) corev1.ResourceRequirements {
	if idx.Resources != nil {
		return *idx.Resources
	}
	return corev1.ResourceRequirements{Requests: corev1.ResourceList{
		corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("512Mi"),
	}}
}
