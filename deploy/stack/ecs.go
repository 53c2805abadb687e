package stack

import (
	"strconv"
	"time"
)

// Logical ids of the shared ECS and network resources.
const (
	idCluster = "Cluster"
	idALB     = "LoadBalancer"
	idALBSG   = "LoadBalancerSecurityGroup"
	idTaskSG  = "TaskSecurityGroup"
)

func (s *Spec) network(t *Template) {
	t.add(idALBSG, Resource{Type: "AWS::EC2::SecurityGroup", Properties: map[string]any{
		"GroupDescription": Sub("pacer-${Stage} load balancer"), "VpcId": Ref("VpcId"),
		"SecurityGroupIngress": s.edgeIngress(), "Tags": tags("network"),
	}})
	t.add(idTaskSG, Resource{Type: "AWS::EC2::SecurityGroup", Properties: map[string]any{
		"GroupDescription": Sub("pacer-${Stage} tasks: reachable from the load balancer only"), "VpcId": Ref("VpcId"), "Tags": tags("network"),
	}})
	for _, sv := range s.Services {
		if sv.Public {
			t.add(sv.ID+"Ingress", Resource{Type: "AWS::EC2::SecurityGroupIngress", Properties: map[string]any{
				"GroupId": GetAtt(idTaskSG, "GroupId"), "SourceSecurityGroupId": GetAtt(idALBSG, "GroupId"),
				"IpProtocol": "tcp", "FromPort": sv.Port, "ToPort": sv.Port, "Description": sv.Name + " from the load balancer",
			}})
		}
	}
	accessLogs(t)
	t.add(idALB, Resource{Type: "AWS::ElasticLoadBalancingV2::LoadBalancer", Properties: map[string]any{
		"Name": Sub("pacer-${Stage}"), "Scheme": "internet-facing", "Type": "application",
		"Subnets": Ref("PublicSubnetIds"), "SecurityGroups": []any{GetAtt(idALBSG, "GroupId")},
		"Tags":                   append(tags("network"), accessLogsTag()),
		"LoadBalancerAttributes": append(append([]any(nil), lbAttributes...), accessLogAttributes()...),
	}})
	edgeListeners(t)
	t.add(idCluster, Resource{Type: "AWS::ECS::Cluster", Properties: map[string]any{
		"ClusterName": Sub("pacer-${Stage}"),
		// RunningTaskCount, the worker scaling's denominator, is a
		// Container Insights metric.
		"ClusterSettings": []any{map[string]any{"Name": "containerInsights", "Value": "enabled"}},
		"Tags":            tags("compute"),
	}})
}

func (s *Spec) services(t *Template) {
	for _, sv := range s.Services {
		s.service(t, sv)
	}
}

// service adds one ECS service: its log group, roles, task definition,
// the service itself, its load balancing if public and its scaling if
// scaled.
func (s *Spec) service(t *Template, sv Service) {
	logs := sv.ID + "Logs"
	t.add(logs, Resource{Type: "AWS::Logs::LogGroup", Properties: map[string]any{
		"LogGroupName": Sub("/pacer/${Stage}/" + sv.Name), "RetentionInDays": 30,
	}})

	s.roles(t, sv)
	taskDefinition(t, sv, logs)

	deploy := map[string]any{"MinimumHealthyPercent": 100, "MaximumPercent": 200,
		"DeploymentCircuitBreaker": map[string]any{"Enable": true, "Rollback": true}}
	if sv.Singleton { // stop the old task before starting the new one
		deploy["MinimumHealthyPercent"], deploy["MaximumPercent"] = 0, 100
	}
	props := map[string]any{
		"ServiceName": sv.Name, "Cluster": Ref(idCluster), "LaunchType": "FARGATE",
		"TaskDefinition": Ref(sv.ID + "TaskDefinition"), "DeploymentConfiguration": deploy,
		"NetworkConfiguration": map[string]any{"AwsvpcConfiguration": map[string]any{
			"Subnets": Ref("PrivateSubnetIds"), "SecurityGroups": []any{GetAtt(idTaskSG, "GroupId")}, "AssignPublicIp": "DISABLED",
		}},
		"PropagateTags": "SERVICE", "Tags": tags(sv.Name),
	}
	if sv.Database {
		props["Tags"] = append(tags(sv.Name), databaseTag())
	}
	if !autoscaled(sv) {
		props["DesiredCount"] = sv.Count
	}
	if sv.Autoscale != nil { // the CPU policy's 20-second metric
		props["Monitoring"] = map[string]any{"MetricConfigurations": []any{map[string]any{
			"MetricNames": []string{"CPUUtilization"}, "ResolutionSeconds": int(apiCPUPeriod / time.Second)}}}
	}
	var dependsOn []string
	if sv.Public {
		tg, route := s.publicRoutes(t, sv)
		props["LoadBalancers"] = []any{map[string]any{"ContainerName": sv.Name, "ContainerPort": sv.Port, "TargetGroupArn": Ref(tg)}}
		props["HealthCheckGracePeriodSeconds"] = 60
		dependsOn = append(dependsOn, route)
	}
	t.add(sv.ID+"Service", Resource{Type: "AWS::ECS::Service", DependsOn: dependsOn, Properties: props})
	s.scaling(t, sv)
}

// roles adds sv's execution role, which pulls the image, writes logs and
// reads sv's secrets only (and decrypts them with SecretsKmsKeyArn, when
// set), and its task role: what the binary may do, assumed by this
// account's tasks only (taskTrust).
func (s *Spec) roles(t *Template, sv Service) {
	exec := map[string]any{
		"AssumeRolePolicyDocument": assumeRole("ecs-tasks.amazonaws.com"),
		"ManagedPolicyArns":        []any{Sub("arn:${AWS::Partition}:iam::aws:policy/service-role/AmazonECSTaskExecutionRolePolicy")},
		"Tags":                     tags(sv.Name),
	}
	if pol := s.secretPolicy(sv); pol != nil {
		exec["Policies"] = []any{pol, ifSecrets(sv, secretsKeyPolicy())}
	}
	t.add(sv.ID+"ExecutionRole", Resource{Type: "AWS::IAM::Role", Properties: exec})
	task := map[string]any{"AssumeRolePolicyDocument": taskTrust(), "Tags": tags(sv.Name)}
	if len(sv.Access) > 0 {
		task["Policies"] = inlinePolicy(sv.Name, s.policy(sv.Access))
	}
	t.add(sv.ID+"TaskRole", Resource{Type: "AWS::IAM::Role", Properties: task})
	photoBucketKeyPolicy(t, sv)
}

// taskDefinition adds sv's Fargate task definition, Linux on the CPU the
// CpuArchitecture parameter names: one container with its variables, its
// secrets (an optional one only when its parameter is set), its port and
// its logs in the group logs.
func taskDefinition(t *Template, sv Service, logs string) {
	var env []any
	for _, e := range sv.Env {
		env = append(env, map[string]any{"Name": e.Name, "Value": Sub(e.CFN)})
	}
	var secrets []any
	for _, sc := range sv.Secrets {
		v := map[string]any{"Name": sc.Name, "ValueFrom": Ref(sc.Param)}
		if sc.Optional {
			secrets = append(secrets, If(condHas(sc.Param), v, NoValue))
		} else {
			secrets = append(secrets, v)
		}
	}
	container := map[string]any{
		"Name": sv.Name, "Image": Ref(sv.Image), "Essential": true, "Environment": env,
		"StopTimeout": 30,
		// The binaries write no file (their Kubernetes pods run with
		// readOnlyRootFilesystem too).
		"ReadonlyRootFilesystem": true,
		"LogConfiguration": map[string]any{"LogDriver": "awslogs", "Options": map[string]any{
			"awslogs-group": Ref(logs), "awslogs-region": Ref("AWS::Region"), "awslogs-stream-prefix": sv.Name,
		}},
	}
	if len(secrets) > 0 {
		container["Secrets"] = secrets
	}
	if sv.Port > 0 {
		container["PortMappings"] = []any{map[string]any{"ContainerPort": sv.Port, "Protocol": "tcp"}}
	}
	t.add(sv.ID+"TaskDefinition", Resource{Type: "AWS::ECS::TaskDefinition", Properties: map[string]any{
		"Family": Sub("pacer-${Stage}-" + sv.Name), "Cpu": strconv.Itoa(sv.CPU), "Memory": strconv.Itoa(sv.MemoryMiB),
		"NetworkMode": "awsvpc", "RequiresCompatibilities": []string{"FARGATE"},
		"RuntimePlatform":  map[string]any{"OperatingSystemFamily": "LINUX", "CpuArchitecture": Ref(ParamCPU)},
		"ExecutionRoleArn": GetAtt(sv.ID+"ExecutionRole", "Arn"), "TaskRoleArn": GetAtt(sv.ID+"TaskRole", "Arn"),
		"ContainerDefinitions": []any{container}, "Tags": tags(sv.Name),
	}})
}

// secretPolicy is the execution role's policy (one of its Policies)
// reading the service's secrets (a Secrets Manager secret or an SSM
// parameter: ECS accepts either ARN), or nil without secrets. Each is
// granted as given and with Secrets Manager's random suffix
// (<arn>-??????), so that the complete ARN the console shows and the
// partial one without the suffix both work: IAM authorizes GetSecretValue
// on the complete ARN.
func (s *Spec) secretPolicy(sv Service) any {
	if len(sv.Secrets) == 0 {
		return nil
	}
	var res []any
	for _, sc := range sv.Secrets {
		suffixed := Sub("${" + sc.Param + "}-??????")
		if sc.Optional {
			res = append(res, If(condHas(sc.Param), Ref(sc.Param), NoValue), If(condHas(sc.Param), suffixed, NoValue))
		} else {
			res = append(res, Ref(sc.Param), suffixed)
		}
	}
	return ifSecrets(sv, namedPolicy("secrets", map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Action": []string{"secretsmanager:GetSecretValue", "ssm:GetParameters"}, "Resource": res,
	}}}))
}

// ifSecrets is v, or, for a service whose one secret is optional, v only
// when that secret's parameter is set (a policy granting nothing is
// refused).
func ifSecrets(sv Service, v any) any {
	if len(sv.Secrets) == 1 && sv.Secrets[0].Optional {
		return If(condHas(sv.Secrets[0].Param), v, NoValue)
	}
	return v
}

func condHas(param string) string { return "Has" + param }
