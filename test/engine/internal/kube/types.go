package kube

// The typed objects the engine builds. Field names and JSON tags are those
// of core/v1 and apps/v1; omitempty where the real types have it, so
// kubectl -o json prints what it would print against a real cluster.

// TypeMeta is apiVersion and kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// ObjectMeta is metadata.
type ObjectMeta struct {
	Name              string            `json:"name,omitempty"`
	GenerateName      string            `json:"generateName,omitempty"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	CreationTimestamp string            `json:"creationTimestamp,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	OwnerReferences   []OwnerReference  `json:"ownerReferences,omitempty"`
}

// OwnerReference names an object's controller.
type OwnerReference struct {
	APIVersion         string `json:"apiVersion"`
	Kind               string `json:"kind"`
	Name               string `json:"name"`
	UID                string `json:"uid"`
	Controller         bool   `json:"controller,omitempty"`
	BlockOwnerDeletion bool   `json:"blockOwnerDeletion,omitempty"`
}

// Node is core/v1 Node.
type Node struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     NodeSpec   `json:"spec"`
	Status   NodeStatus `json:"status"`
}

// NodeSpec is the part of a node's spec the engine sets.
type NodeSpec struct {
	PodCIDR       string   `json:"podCIDR,omitempty"`
	PodCIDRs      []string `json:"podCIDRs,omitempty"`
	ProviderID    string   `json:"providerID,omitempty"`
	Unschedulable bool     `json:"unschedulable,omitempty"`
	Taints        []Taint  `json:"taints,omitempty"`
}

// Taint is a node taint.
type Taint struct {
	Key       string `json:"key"`
	Value     string `json:"value,omitempty"`
	Effect    string `json:"effect"`
	TimeAdded string `json:"timeAdded,omitempty"`
}

// NodeStatus is a node's status.
type NodeStatus struct {
	Capacity        map[string]string `json:"capacity,omitempty"`
	Allocatable     map[string]string `json:"allocatable,omitempty"`
	Conditions      []NodeCondition   `json:"conditions,omitempty"`
	Addresses       []NodeAddress     `json:"addresses,omitempty"`
	DaemonEndpoints DaemonEndpoints   `json:"daemonEndpoints"`
	NodeInfo        NodeSystemInfo    `json:"nodeInfo"`
}

// NodeCondition is one of a node's conditions.
type NodeCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	LastHeartbeatTime  string `json:"lastHeartbeatTime,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
}

// NodeAddress is one of a node's addresses.
type NodeAddress struct {
	Type    string `json:"type"`
	Address string `json:"address"`
}

// DaemonEndpoints is where the kubelet listens.
type DaemonEndpoints struct {
	KubeletEndpoint struct {
		Port int `json:"Port"`
	} `json:"kubeletEndpoint"`
}

// NodeSystemInfo is status.nodeInfo.
type NodeSystemInfo struct {
	MachineID               string `json:"machineID"`
	SystemUUID              string `json:"systemUUID"`
	BootID                  string `json:"bootID"`
	KernelVersion           string `json:"kernelVersion"`
	OSImage                 string `json:"osImage"`
	ContainerRuntimeVersion string `json:"containerRuntimeVersion"`
	KubeletVersion          string `json:"kubeletVersion"`
	KubeProxyVersion        string `json:"kubeProxyVersion,omitempty"`
	OperatingSystem         string `json:"operatingSystem"`
	Architecture            string `json:"architecture"`
}

// Pod is core/v1 Pod.
type Pod struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     PodSpec    `json:"spec"`
	Status   PodStatus  `json:"status"`
}

// PodSpec is the part of a pod's spec the engine sets.
type PodSpec struct {
	NodeName    string       `json:"nodeName,omitempty"`
	Containers  []Container  `json:"containers"`
	Volumes     []Volume     `json:"volumes,omitempty"`
	Tolerations []Toleration `json:"tolerations,omitempty"`
}

// Container is a pod's container.
type Container struct {
	Name  string `json:"name"`
	Image string `json:"image"`
}

// Volume is a pod volume; only emptyDir is used.
type Volume struct {
	Name     string    `json:"name"`
	EmptyDir *struct{} `json:"emptyDir,omitempty"`
}

// Toleration is a pod toleration.
type Toleration struct {
	Key      string `json:"key,omitempty"`
	Operator string `json:"operator,omitempty"`
	Effect   string `json:"effect,omitempty"`
}

// PodStatus is a pod's status.
type PodStatus struct {
	Phase             string            `json:"phase"`
	Conditions        []PodCondition    `json:"conditions,omitempty"`
	HostIP            string            `json:"hostIP,omitempty"`
	PodIP             string            `json:"podIP,omitempty"`
	StartTime         string            `json:"startTime,omitempty"`
	ContainerStatuses []ContainerStatus `json:"containerStatuses,omitempty"`
}

// PodCondition is one of a pod's conditions.
type PodCondition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// ContainerStatus is one container's status.
type ContainerStatus struct {
	Name         string         `json:"name"`
	Ready        bool           `json:"ready"`
	RestartCount int            `json:"restartCount"`
	Image        string         `json:"image"`
	State        map[string]any `json:"state"`
}

// Workload is a DaemonSet or ReplicaSet, as much as drain reads of it.
type Workload struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta     `json:"metadata"`
	Spec     map[string]any `json:"spec"`
	Status   map[string]any `json:"status"`
}
