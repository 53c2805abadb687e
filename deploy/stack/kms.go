package stack

import "slices"

// Customer managed KMS keys. A secret, SecureString parameter or photo
// encrypted with an AWS managed key (aws/secretsmanager, aws/ssm, SSE-S3
// or aws/s3) needs no grant: AWS decrypts it for whoever may read it. One
// encrypted with a customer managed key is read only by a role that may
// also kms:Decrypt with that key, so the stack grants it when told the
// key: ParamSecretsKey to every execution role that reads secrets, through
// Secrets Manager and SSM only, and ParamPhotoBucketKey to the task role
// of each binary reading the photo bucket (photo-api's presigned GETs are
// authorized as its role), through S3 only (kms:ViaService). The key's
// own policy must let the account's IAM policies grant its use, as the
// default key policy does (docs/deploy.md).
const (
	ParamSecretsKey     = "SecretsKmsKeyArn"
	ParamPhotoBucketKey = "PhotoBucketKmsKeyArn"
	// KMSKeyPattern is the keys' AllowedPattern: empty, or a key ARN (IAM
	// authorizes kms:Decrypt on the key's ARN, never on an alias's).
	KMSKeyPattern = `^(arn:aws[a-z-]*:kms:[a-z0-9-]+:[0-9]{12}:key/(mrk-[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))?$`
)

func (s *Spec) kmsParameters(p map[string]Parameter) {
	key := func(what string) Parameter {
		return Parameter{Type: "String", Default: str(""), AllowedPattern: KMSKeyPattern,
			Description:           "ARN of the customer managed KMS key encrypting " + what + "; empty: an AWS managed key, which needs no grant",
			ConstraintDescription: "empty, or a KMS key ARN (arn:aws:kms:<region>:<account>:key/<key id>), not an alias"}
	}
	p[ParamSecretsKey] = key("the secrets (Secrets Manager or SSM SecureString): each execution role reading secrets may kms:Decrypt with it, through those two services only")
	p[ParamPhotoBucketKey] = key("the photo bucket's objects (SSE-KMS): photo-api's task role may kms:Decrypt with it, through S3 only")
}

func kmsConditions(t *Template) {
	for _, p := range []string{ParamSecretsKey, ParamPhotoBucketKey} {
		t.Conditions[condHas(p)] = map[string]any{"Fn::Not": []any{map[string]any{"Fn::Equals": []any{Ref(p), ""}}}}
	}
}

// decryptVia is a policy document allowing kms:Decrypt with the key the
// parameter param names, through the services (secretsmanager, s3, ...)
// of the stack's region only.
func decryptVia(param string, services ...string) map[string]any {
	var via []any
	for _, sv := range services {
		via = append(via, Sub(sv+".${AWS::Region}.amazonaws.com"))
	}
	return map[string]any{"Version": "2012-10-17", "Statement": []any{map[string]any{
		"Effect": "Allow", "Action": []string{"kms:Decrypt"}, "Resource": Ref(param),
		"Condition": map[string]any{"StringEquals": map[string]any{"kms:ViaService": via}},
	}}}
}

// secretsKeyPolicy is an execution role's grant of ParamSecretsKey, one
// of its Policies when the parameter is set.
func secretsKeyPolicy() any {
	return If(condHas(ParamSecretsKey), namedPolicy("secrets-key", decryptVia(ParamSecretsKey, "secretsmanager", "ssm")), NoValue)
}

// photoBucketKeyPolicy adds, for a service reading the photo bucket, its
// task role's grant of ParamPhotoBucketKey when the parameter is set: a
// policy of its own (<ID>PhotoBucketKeyPolicy), so that the task role's
// one inline policy stays exactly its Access, which services/gen/deploy
// proves call by call on the stand-ins (they have no KMS). photo-api
// needs the key only when an organizer follows a presigned link, never to
// start.
func photoBucketKeyPolicy(t *Template, sv Service) {
	if !slices.ContainsFunc(sv.Access, func(g Grant) bool { return slices.Contains(g.Resources, TargetPhotoBucket) }) {
		return
	}
	t.add(sv.ID+"PhotoBucketKeyPolicy", Resource{Type: "AWS::IAM::RolePolicy", Condition: condHas(ParamPhotoBucketKey), Properties: map[string]any{
		"RoleName": Ref(sv.ID + "TaskRole"), "PolicyName": "photo-bucket-key", "PolicyDocument": decryptVia(ParamPhotoBucketKey, "s3"),
	}})
}
