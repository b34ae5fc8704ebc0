package v1alpha1

import corev1 "k8s.io/api/core/v1"

// Defaults of a Retriever.
const (
	DefaultChildTopK   = 20
	DefaultMaxParents  = 3
	DefaultServicePort = 8080
)

// GetChildTopK returns childTopK, 20 when unset.
func (r *Retriever) GetChildTopK() int {
	if r.Spec.ChildTopK <= 0 {
		return DefaultChildTopK
	}
	return r.Spec.ChildTopK
}

// GetMaxParents returns maxParents, 3 when unset.
func (r *Retriever) GetMaxParents() int {
	if r.Spec.MaxParents <= 0 {
		return DefaultMaxParents
	}
	return r.Spec.MaxParents
}

// GetAggregation returns the aggregation, Max when unset.
func (r *Retriever) GetAggregation() Aggregation {
	if r.Spec.Aggregation == "" {
		return AggregationMax
	}
	return r.Spec.Aggregation
}

// GetReplicas returns the replica count, 1 when unset.
func (r *Retriever) GetReplicas() int32 {
	if r.Spec.Replicas == nil {
		return 1
	}
	return *r.Spec.Replicas
}

// GetServicePort returns the Service port, 8080 when unset.
func (r *Retriever) GetServicePort() int32 {
	if r.Spec.Service == nil || r.Spec.Service.Port == 0 {
		return DefaultServicePort
	}
	return r.Spec.Service.Port
}

// GetServiceType returns the Service type, ClusterIP when unset.
func (r *Retriever) GetServiceType() corev1.ServiceType {
	if r.Spec.Service == nil || r.Spec.Service.Type == "" {
		return corev1.ServiceTypeClusterIP
	}
	return r.Spec.Service.Type
}

// GetTrack returns the track, Active when unset.
func (r *Retriever) GetTrack() Track {
	if r.Spec.Track == "" {
		return TrackActive
	}
	return r.Spec.Track
}

// GetAuthMode returns the auth mode, None when unset.
func (r *Retriever) GetAuthMode() AuthMode {
	if r.Spec.Auth == nil || r.Spec.Auth.Mode == "" {
		return AuthNone
	}
	return r.Spec.Auth.Mode
}

// GetAuthSecretName returns the name of the Secret holding the accepted
// bearer tokens, "" unless the mode is BearerToken.
func (r *Retriever) GetAuthSecretName() string {
	if r.GetAuthMode() != AuthBearerToken || r.Spec.Auth.SecretRef == nil {
		return ""
	}
	return r.Spec.Auth.SecretRef.Name
}
