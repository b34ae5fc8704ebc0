// Package kubemeta gives the empty objects through which parentrag reads
// Kubernetes objects as metadata alone: their names, labels, UIDs and
// resourceVersions, without their data. The operator reads ConfigMaps
// this way wherever it needs to know which exist or whether they changed
// (source ConfigMaps, revision manifests and shards), so that their data
// is neither held by an informer nor sent by the API server.
package kubemeta

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ConfigMap returns an empty ConfigMap as metadata, to get one without its
// data.
func ConfigMap() *metav1.PartialObjectMetadata {
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMap"))
	return meta
}

// ConfigMapList returns an empty list of ConfigMaps as metadata, to list
// them without their data.
func ConfigMapList() *metav1.PartialObjectMetadataList {
	list := &metav1.PartialObjectMetadataList{}
	list.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("ConfigMapList"))
	return list
}
