package stack

// Postgres access for the services that need it at start (photo-api
// applies its migrations before it listens). The stack cannot wait for a
// user to allow its task security group into the database after it is
// created: the services start during the create, fail, and the deployment
// circuit breaker rolls the stack back, deleting the group. So the
// stack opens the way itself when given the database's security group
// (ParamDatabaseSG: an ingress rule on ParamDatabasePort from the task
// group, created before any service that needs the database); without
// it, the database must already admit the private subnets' addresses, a
// prerequisite that can exist before the stack (docs/deploy.md).
const (
	ParamDatabaseSG   = "DatabaseSecurityGroupId"
	ParamDatabasePort = "DatabasePort"
	idDatabaseIngress = "DatabaseIngress"
	// TagDatabaseIngress is the tag a service that needs the database
	// carries: the ingress rule's id, which also makes CloudFormation
	// create the rule before the service (a DependsOn cannot name a
	// resource whose condition may be false).
	TagDatabaseIngress = "pacer:database-ingress"
)

func (s *Spec) databaseParameters(p map[string]Parameter) {
	p[ParamDatabaseSG] = Parameter{Type: "String", Default: str(""), AllowedPattern: `^(sg-[0-9a-f]{8}|sg-[0-9a-f]{17})?$`,
		Description: "Security group of the Postgres photo-api uses (DATABASE_URL): the stack allows its tasks into it on DatabasePort " +
			"before photo-api starts; empty: the database must already admit the private subnets' addresses",
		ConstraintDescription: "empty, or a security group id (sg- and 8 or 17 hex digits)"}
	p[ParamDatabasePort] = Parameter{Type: "Number", Default: str("5432"), MinValue: num(1), MaxValue: num(65535),
		Description: "Port of that Postgres (with DatabaseSecurityGroupId)"}
}

func (s *Spec) databaseAccess(t *Template) {
	t.Conditions[condHas(ParamDatabaseSG)] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{Ref(ParamDatabaseSG), ""}}}}
	t.add(idDatabaseIngress, Resource{Type: "AWS::EC2::SecurityGroupIngress", Condition: condHas(ParamDatabaseSG), Properties: map[string]any{
		"GroupId": Ref(ParamDatabaseSG), "SourceSecurityGroupId": GetAtt(idTaskSG, "GroupId"),
		"IpProtocol": "tcp", "FromPort": Ref(ParamDatabasePort), "ToPort": Ref(ParamDatabasePort),
		"Description": Sub("pacer-${Stage} tasks to Postgres"),
	}})
}

// databaseTag is the tag of a service that needs the database: see
// TagDatabaseIngress.
func databaseTag() any {
	return map[string]any{"Key": TagDatabaseIngress, "Value": If(condHas(ParamDatabaseSG), Ref(idDatabaseIngress), "none")}
}
