package e2eutil

// CNIManifest is the file name of the test package's raw manifest, which
// apply's phase 21 applies with kubectl.
const CNIManifest = "cargoship-e2e-cni.yaml"

// CNIObjects are what the manifest holds, as `kubectl get -o name` prints
// them with -n kube-system.
var CNIObjects = []string{
	"serviceaccount/cargoship-e2e-cni",
	"clusterrole.rbac.authorization.k8s.io/cargoship-e2e-cni",
	"clusterrolebinding.rbac.authorization.k8s.io/cargoship-e2e-cni",
	"configmap/cargoship-e2e-cni-config",
	"daemonset.apps/cargoship-e2e-cni",
}

// cniManifest stands in for a CNI's manifest (flannel's has these kinds):
// the test engine stores what kubectl applies and runs no pods, so its
// DaemonSet only has to be a valid one.
const cniManifest = `# cargoship e2e suite: a stand-in for a CNI's manifest, applied by phase 21.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: cargoship-e2e-cni
  namespace: kube-system
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: cargoship-e2e-cni
rules:
  - apiGroups: [""]
    resources: [nodes, pods]
    verbs: [get, list, watch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: cargoship-e2e-cni
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cargoship-e2e-cni
subjects:
  - kind: ServiceAccount
    name: cargoship-e2e-cni
    namespace: kube-system
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cargoship-e2e-cni-config
  namespace: kube-system
data:
  net-conf.json: |
    {"Network": "10.42.0.0/16", "Backend": {"Type": "vxlan"}}
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: cargoship-e2e-cni
  namespace: kube-system
  labels:
    app: cargoship-e2e-cni
spec:
  selector:
    matchLabels:
      app: cargoship-e2e-cni
  template:
    metadata:
      labels:
        app: cargoship-e2e-cni
    spec:
      hostNetwork: true
      serviceAccountName: cargoship-e2e-cni
      tolerations:
        - operator: Exists
      containers:
        - name: cni
          image: ` + ImageRef + `
          volumeMounts:
            - name: cfg
              mountPath: /etc/cni-config
      volumes:
        - name: cfg
          configMap:
            name: cargoship-e2e-cni-config
`
