package controllers

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/intstr"
	appsv1ac "k8s.io/client-go/applyconfigurations/apps/v1"
	corev1ac "k8s.io/client-go/applyconfigurations/core/v1"
	metav1ac "k8s.io/client-go/applyconfigurations/meta/v1"
	rbacv1ac "k8s.io/client-go/applyconfigurations/rbac/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/parentrag/parentrag/api/v1alpha1"
	"github.com/parentrag/parentrag/internal/index/postgres"
	"github.com/parentrag/parentrag/internal/indexjob"
	"github.com/parentrag/parentrag/internal/retrieval/bundle"
)

// Query server settings shared by the Deployment and its probes.
const (
	serverPort     = 8080
	serverPortName = "http"
	dataDir        = "/var/lib/parentrag"
	revisionAnno   = "parentrag.io/revision"
	// terminationGracePeriod is how long a query pod may take to stop.
	terminationGracePeriod = 30
)

// queryPlan is everything the Retriever's objects are derived from.
type queryPlan struct {
	retriever *v1alpha1.Retriever
	corpus    *v1alpha1.Corpus
	revision  string
	// configMaps are the names of the revision's ConfigMaps and, while a
	// rollout replaces it, those of the revision served before: the only
	// ones the query pods may read.
	configMaps []string
	// claim holds the revision instead, with a persistentVolumeClaim
	// parent store.
	claim string
	image string
}

// selectorLabels select the Retriever's pods.
func (p *queryPlan) selectorLabels() map[string]string {
	return map[string]string{
		"app.kubernetes.io/name":     "parentrag-retriever",
		"app.kubernetes.io/instance": p.retriever.Name,
	}
}

// labels are set on every object of the Retriever.
func (p *queryPlan) labels() map[string]string {
	l := p.selectorLabels()
	l[LabelManagedBy] = ManagedByValue
	l[LabelRetriever] = p.retriever.Name
	return l
}

// owner is the controller reference to the Retriever.
func (p *queryPlan) owner() *metav1ac.OwnerReferenceApplyConfiguration {
	return controllerRef("Retriever", p.retriever)
}

// controllerRef is the controller reference to a parentrag object of kind.
func controllerRef(kind string, o client.Object) *metav1ac.OwnerReferenceApplyConfiguration {
	return metav1ac.OwnerReference().
		WithAPIVersion(v1alpha1.GroupVersion.String()).WithKind(kind).
		WithName(o.GetName()).WithUID(o.GetUID()).
		WithController(true).WithBlockOwnerDeletion(true)
}

// serviceAccount is the identity of the query pods.
func (p *queryPlan) serviceAccount() *corev1ac.ServiceAccountApplyConfiguration {
	return corev1ac.ServiceAccount(p.retriever.Name, p.retriever.Namespace).
		WithLabels(p.labels()).WithOwnerReferences(p.owner())
}

// role lets the query pods read exactly the ConfigMaps of the revision
// they serve, and nothing else.
func (p *queryPlan) role() *rbacv1ac.RoleApplyConfiguration {
	role := rbacv1ac.Role(p.retriever.Name, p.retriever.Namespace).
		WithLabels(p.labels()).WithOwnerReferences(p.owner())
	if len(p.configMaps) == 0 {
		// A revision on a claim needs no ConfigMap; no names would mean all.
		return role.WithRules()
	}
	return role.WithRules(rbacv1ac.PolicyRule().
		WithAPIGroups("").WithResources("configmaps").
		WithVerbs("get").WithResourceNames(p.configMaps...))
}

// roleBinding grants the role to the service account.
func (p *queryPlan) roleBinding() *rbacv1ac.RoleBindingApplyConfiguration {
	return rbacv1ac.RoleBinding(p.retriever.Name, p.retriever.Namespace).
		WithLabels(p.labels()).WithOwnerReferences(p.owner()).
		WithRoleRef(rbacv1ac.RoleRef().WithAPIGroup("rbac.authorization.k8s.io").WithKind("Role").WithName(p.retriever.Name)).
		WithSubjects(rbacv1ac.Subject().WithKind("ServiceAccount").WithName(p.retriever.Name).WithNamespace(p.retriever.Namespace))
}

// service fronts the query pods.
func (p *queryPlan) service() *corev1ac.ServiceApplyConfiguration {
	return corev1ac.Service(p.retriever.Name, p.retriever.Namespace).
		WithLabels(p.labels()).WithOwnerReferences(p.owner()).
		WithSpec(corev1ac.ServiceSpec().
			WithType(p.retriever.GetServiceType()).
			WithSelector(p.selectorLabels()).
			WithPorts(corev1ac.ServicePort().WithName(serverPortName).WithProtocol(corev1.ProtocolTCP).
				WithPort(p.retriever.GetServicePort()).WithTargetPort(intstr.FromString(serverPortName))))
}

// deployment runs `parentrag serve` for the revision. The revision is in
// the pod template (args and an annotation), so a new revision rolls the
// pods; maxUnavailable 0 keeps every old pod until a new one is ready.
func (p *queryPlan) deployment() *appsv1ac.DeploymentApplyConfiguration {
	maxUnavailable, maxSurge := intstr.FromInt32(0), intstr.FromInt32(1)
	return appsv1ac.Deployment(p.retriever.Name, p.retriever.Namespace).
		WithLabels(p.labels()).WithOwnerReferences(p.owner()).
		WithSpec(appsv1ac.DeploymentSpec().
			WithReplicas(p.retriever.GetReplicas()).
			WithSelector(metav1ac.LabelSelector().WithMatchLabels(p.selectorLabels())).
			WithStrategy(appsv1ac.DeploymentStrategy().WithType("RollingUpdate").
				WithRollingUpdate(appsv1ac.RollingUpdateDeployment().WithMaxUnavailable(maxUnavailable).WithMaxSurge(maxSurge))).
			WithTemplate(corev1ac.PodTemplateSpec().
				WithLabels(p.labels()).
				WithAnnotations(map[string]string{revisionAnno: p.revision}).
				WithSpec(p.podSpec())))
}

// podSpec is the query pod: non-root, read-only root file system, a
// scratch volume for the unpacked revision.
func (p *queryPlan) podSpec() *corev1ac.PodSpecApplyConfiguration {
	return corev1ac.PodSpec().
		// The server answers for its shutdown delay (5s) after SIGTERM, then
		// drains for up to 20s: both fit before the kubelet kills it.
		WithTerminationGracePeriodSeconds(terminationGracePeriod).
		WithServiceAccountName(p.retriever.Name).
		WithAutomountServiceAccountToken(true).
		WithSecurityContext(corev1ac.PodSecurityContext().WithRunAsNonRoot(true).
			WithSeccompProfile(corev1ac.SeccompProfile().WithType(corev1.SeccompProfileTypeRuntimeDefault))).
		WithContainers(p.container()).
		WithVolumes(append([]*corev1ac.VolumeApplyConfiguration{p.volume()}, p.authVolumes()...)...)
}

// volume is the revision's claim, read-only, or scratch space for a
// revision unpacked from ConfigMaps.
func (p *queryPlan) volume() *corev1ac.VolumeApplyConfiguration {
	v := corev1ac.Volume().WithName("data")
	if p.claim != "" {
		return v.WithPersistentVolumeClaim(corev1ac.PersistentVolumeClaimVolumeSource().WithClaimName(p.claim).WithReadOnly(true))
	}
	return v.WithEmptyDir(corev1ac.EmptyDirVolumeSource())
}

// container runs the query server with the Retriever's settings.
func (p *queryPlan) container() *corev1ac.ContainerApplyConfiguration {
	return corev1ac.Container().
		WithName("server").
		WithImage(p.image).
		WithArgs(p.serveArgs()...).
		WithEnv(p.env()...).
		WithPorts(corev1ac.ContainerPort().WithName(serverPortName).WithContainerPort(serverPort).WithProtocol(corev1.ProtocolTCP)).
		WithReadinessProbe(probe("/readyz", 2)).
		WithLivenessProbe(probe("/healthz", 10)).
		WithResources(p.resources()).
		WithVolumeMounts(corev1ac.VolumeMount().WithName("data").WithMountPath(dataDir).WithReadOnly(p.claim != "")).
		WithVolumeMounts(p.authMounts()...).
		WithSecurityContext(corev1ac.SecurityContext().
			WithAllowPrivilegeEscalation(false).WithReadOnlyRootFilesystem(true).WithRunAsNonRoot(true).
			WithCapabilities(corev1ac.Capabilities().WithDrop("ALL")))
}

// serveArgs are the query server's arguments for the plan's revision.
func (p *queryPlan) serveArgs() []string {
	if p.claim != "" {
		return ClaimServeArgs(p.retriever)
	}
	return ServeArgs(p.retriever, p.corpus, p.revision)
}

// ServeArgs are the query server's arguments for a revision of a Corpus
// kept in ConfigMaps. The end-to-end test runs `parentrag serve` with
// exactly these.
func ServeArgs(r *v1alpha1.Retriever, c *v1alpha1.Corpus, revision string) []string {
	return append([]string{
		"serve",
		"--configmap=" + c.RevisionObjectName(revision),
		"--data-dir=" + dataDir + "/" + v1alpha1.ShortRevision(revision),
	}, queryArgs(r)...)
}

// ClaimServeArgs are the query server's arguments for a revision on a
// claim, mounted read-only: the bundle is served where it lies.
func ClaimServeArgs(r *v1alpha1.Retriever) []string {
	return append([]string{"serve", "--index=" + dataDir + "/" + indexjob.BundleDir}, queryArgs(r)...)
}

// queryArgs are the server address, the Corpus served (the id of its
// OpenAI vector store, whatever holds the revision), the Retriever's query
// settings, its auth flags, its rerank stage, where its traces go and,
// only when it is on, the inspector.
func queryArgs(r *v1alpha1.Retriever) []string {
	args := append([]string{
		"--addr=:" + itoa(serverPort),
		"--corpus=" + r.Spec.CorpusRef.Name,
		"--max-parents=" + itoa(r.GetMaxParents()),
		"--child-top-k=" + itoa(r.GetChildTopK()),
		"--aggregation=" + string(r.GetAggregation()),
	}, slices.Concat(modeArgs(r), searchArgs(r), authArgs(r), rerankArgs(r))...)
	if t := r.Spec.Tracing; t != nil {
		args = append(args, "--otlp-endpoint="+t.OTLPEndpoint)
	}
	if r.Spec.Inspector {
		args = append(args, "--inspector")
	}
	return args
}

// searchArgs are the flags of the Retriever's search mode and fusion;
// none when it sets none, so the query pods' arguments are those of
// before the field existed.
func searchArgs(r *v1alpha1.Retriever) []string {
	s := r.Spec.Search
	if s == nil {
		return nil
	}
	var out []string
	if s.Mode != "" {
		out = append(out, "--search="+string(s.Mode))
	}
	if f := s.Fusion; f != nil {
		if f.K > 0 {
			out = append(out, "--rrf-k="+itoa(f.K))
		}
		if f.SparseWeight != "" {
			out = append(out, "--sparse-weight="+f.SparseWeight)
		}
		if f.DenseWeight != "" {
			out = append(out, "--dense-weight="+f.DenseWeight)
		}
	}
	return out
}

// env gives the pod its namespace and the Corpus's credentials.
func (p *queryPlan) env() []*corev1ac.EnvVarApplyConfiguration {
	env := []*corev1ac.EnvVarApplyConfiguration{
		corev1ac.EnvVar().WithName("POD_NAMESPACE").WithValueFrom(corev1ac.EnvVarSource().
			WithFieldRef(corev1ac.ObjectFieldSelector().WithFieldPath("metadata.namespace"))),
	}
	for _, v := range credentialEnv(p.corpus) {
		ref := v.ValueFrom.SecretKeyRef
		env = append(env, corev1ac.EnvVar().WithName(v.Name).WithValueFrom(corev1ac.EnvVarSource().
			WithSecretKeyRef(corev1ac.SecretKeySelector().WithName(ref.Name).WithKey(ref.Key).WithOptional(*ref.Optional))))
	}
	return env
}

// credentialEnv gives query pods and indexing Jobs what they need from
// the Corpus's Secrets: the embedding API key, the Milvus token or user
// name and password (either may be absent), and the keys of the Postgres
// connection Secret with its CA certificates.
func credentialEnv(c *v1alpha1.Corpus) []corev1.EnvVar {
	secret := func(variable, name, key string, optional bool) corev1.EnvVar {
		return corev1.EnvVar{Name: variable, ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{
			LocalObjectReference: corev1.LocalObjectReference{Name: name}, Key: key, Optional: &optional}}}
	}
	var env []corev1.EnvVar
	if e := c.Spec.Embedding; e.IsOpenAI() && e.OpenAI.SecretRef != nil {
		env = append(env, secret(apiKeyEnv, e.OpenAI.SecretRef.Name, secretKey(e.OpenAI.SecretRef), false))
	}
	if c.UsesMilvus() && c.Spec.VectorStore.Milvus.SecretRef != nil {
		name := c.Spec.VectorStore.Milvus.SecretRef.Name
		env = append(env, secret("MILVUS_TOKEN", name, milvusTokenKey, true),
			secret("MILVUS_USERNAME", name, milvusUsernameKey, true), secret("MILVUS_PASSWORD", name, milvusPasswordKey, true))
	}
	if c.UsesPostgres() {
		p := c.Spec.VectorStore.Postgres
		// Each key of the connection Secret, those it lacks left unset.
		for _, key := range []string{postgres.KeyDSN, postgres.KeyURI, postgres.KeyHost, postgres.KeyPort, postgres.KeyDBName, postgres.KeyUser, postgres.KeyUsername, postgres.KeyPassword} {
			env = append(env, secret(bundle.PostgresEnv(key), p.SecretRef.Name, key, true))
		}
		if p.TLS != nil && p.TLS.CASecretRef != nil {
			env = append(env, secret(bundle.PostgresCAEnv, p.TLS.CASecretRef.Name, postgresCAKey, false))
		}
	}
	return env
}

// resources are the Retriever's, or modest requests when unset.
func (p *queryPlan) resources() *corev1ac.ResourceRequirementsApplyConfiguration {
	rr := corev1ac.ResourceRequirements()
	if r := p.retriever.Spec.Resources; r != nil {
		return rr.WithRequests(r.Requests).WithLimits(r.Limits)
	}
	return rr.WithRequests(corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("50m"),
		corev1.ResourceMemory: resource.MustParse("64Mi"),
	})
}

// probe is an HTTP probe on the server port.
func probe(path string, period int32) *corev1ac.ProbeApplyConfiguration {
	return corev1ac.Probe().
		WithHTTPGet(corev1ac.HTTPGetAction().WithPath(path).WithPort(intstr.FromString(serverPortName))).
		WithPeriodSeconds(period).WithFailureThreshold(3)
}
