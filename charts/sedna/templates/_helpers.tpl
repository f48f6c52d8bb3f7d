{{/* Names and labels shared by every template. */}}

{{- define "sedna.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "sedna.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sedna.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "sedna.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{/* Selector labels of one component: include "sedna.selectorLabels" (list . "gm") */}}
{{- define "sedna.selectorLabels" -}}
{{- $root := index . 0 -}}
app.kubernetes.io/name: {{ include "sedna.name" $root }}
app.kubernetes.io/instance: {{ $root.Release.Name }}
app.kubernetes.io/component: {{ index . 1 }}
{{- end -}}

{{- define "sedna.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "sedna.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "sedna.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}

{{- define "sedna.gmName" -}}{{ include "sedna.fullname" . }}-gm{{- end -}}
{{- define "sedna.lcName" -}}{{ include "sedna.fullname" . }}-lc{{- end -}}

{{- define "sedna.edgeTokenSecret" -}}
{{- default (printf "%s-edge-token" (include "sedna.fullname" .)) .Values.edge.token.existingSecret -}}
{{- end -}}

{{- define "sedna.edgeTLSSecret" -}}
{{- default (printf "%s-edge-tls" (include "sedna.fullname" .)) .Values.edge.tls.existingSecret -}}
{{- end -}}

{{- define "sedna.edgeCAConfigMap" -}}
{{- default (printf "%s-edge-ca" (include "sedna.fullname" .)) .Values.edge.tls.caConfigMap -}}
{{- end -}}

{{/*
The edge token the chart's Secret holds: the given value, else the one already installed (kept on upgrades), else a
new random one. Computed once per render (remembered in .Values) so that the Secret and the pods' checksum agree.
*/}}
{{- define "sedna.edgeToken" -}}
{{- if not .Values.edge.token.value -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "sedna.edgeTokenSecret" .) -}}
{{- if and $existing $existing.data (hasKey $existing.data "token") -}}
{{- $_ := set .Values.edge.token "value" (index $existing.data "token" | b64dec) -}}
{{- else -}}
{{- $_ := set .Values.edge.token "value" (randAlphaNum 48) -}}
{{- end -}}
{{- end -}}
{{- .Values.edge.token.value -}}
{{- end -}}

{{/*
Node identity: the names of edge.nodes (an entry is a name or {name, token}), checked. With nodes listed, each node
has its own token and LC DaemonSet and the shared token is off.
*/}}
{{- define "sedna.edgeNodeNames" -}}
{{- $names := list -}}
{{- range .Values.edge.nodes -}}
{{- $name := ternary . (get (kindIs "map" . | ternary . dict) "name") (kindIs "string" .) -}}
{{- if not (regexMatch "^[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?$" (toString $name)) -}}
{{- fail (printf "edge.nodes: %q is not a node name of at most 63 characters (a DNS-1123 subdomain)" (toString $name)) -}}
{{- end -}}
{{- if has $name $names -}}
{{- fail (printf "edge.nodes: %q is listed twice" $name) -}}
{{- end -}}
{{- $names = append $names $name -}}
{{- end -}}
{{- join "\n" $names -}}
{{- end -}}

{{/* "true" when LCs authenticate with the one shared token (edge.token.enabled and no edge.nodes). */}}
{{- define "sedna.sharedTokenOn" -}}
{{- if and .Values.edge.token.enabled (not .Values.edge.nodes) -}}true{{- end -}}
{{- end -}}

{{- define "sedna.nodeTokenSecret" -}}
{{- $root := index . 0 -}}
{{- printf "%s-lc-token-%s" (include "sedna.fullname" $root) (index . 1) -}}
{{- end -}}

{{/*
The token of node (index . 1): the value given in edge.nodes, else the one already installed (kept on upgrades and
after a rotation done with kubectl), else a new random one.
*/}}
{{- define "sedna.nodeToken" -}}
{{- $root := index . 0 -}}
{{- $node := index . 1 -}}
{{- $token := "" -}}
{{- range $root.Values.edge.nodes -}}
{{- if and (kindIs "map" .) (eq (toString (get . "name")) $node) -}}
{{- $token = toString (get . "token" | default "") -}}
{{- end -}}
{{- end -}}
{{- if not $token -}}
{{- $existing := lookup "v1" "Secret" $root.Release.Namespace (include "sedna.nodeTokenSecret" (list $root $node)) -}}
{{- if and $existing $existing.data (hasKey $existing.data "token") -}}
{{- $token = index $existing.data "token" | b64dec -}}
{{- else -}}
{{- $token = randAlphaNum 48 -}}
{{- end -}}
{{- end -}}
{{- $token -}}
{{- end -}}

{{/* Checksum of what the edge link's pods read at start: a change rolls them (node tokens are re-read live). */}}
{{- define "sedna.edgeChecksum" -}}
{{- $parts := list -}}
{{- if include "sedna.sharedTokenOn" . -}}
{{- $parts = append $parts (ternary .Values.edge.token.existingSecret (include "sedna.edgeToken" .) (ne .Values.edge.token.existingSecret "")) -}}
{{- end -}}
{{- if .Values.edge.tls.enabled -}}
{{- $parts = append $parts (printf "%s|%s|%s|%s" .Values.edge.tls.existingSecret .Values.edge.tls.cert .Values.edge.tls.ca .Values.edge.tls.caConfigMap) -}}
{{- end -}}
{{- join "\n" $parts | sha256sum -}}
{{- end -}}

{{- define "sedna.checkTLS" -}}
{{- if .Values.edge.tls.enabled -}}
{{- if not (or .Values.edge.tls.existingSecret (and .Values.edge.tls.cert .Values.edge.tls.key)) -}}
{{- fail "edge.tls.enabled needs edge.tls.existingSecret, or edge.tls.cert and edge.tls.key" -}}
{{- end -}}
{{- if not (or .Values.edge.tls.ca .Values.edge.tls.caConfigMap) -}}
{{- fail "edge.tls.enabled needs the CA for the LCs: edge.tls.ca or edge.tls.caConfigMap" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "sedna.checkReplicas" -}}
{{- if and (gt (int .Values.gm.replicas) 1) (not .Values.gm.leaderElection.enabled) -}}
{{- fail "gm.replicas > 1 needs gm.leaderElection.enabled: true (two GMs without election would both act)" -}}
{{- end -}}
{{- end -}}
