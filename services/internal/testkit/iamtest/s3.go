package iamtest

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// Object is an S3 object's ARN: arn:aws:s3:::BUCKET/KEY (S3 ARNs name no
// region or account).
func (a ARNs) Object(bucket, key string) string {
	p := a.Partition
	if p == "" {
		p = "aws"
	}
	return "arn:" + p + ":s3:::" + bucket + "/" + key
}

// getObject is S3 GetObject on the object: a GET, or a presigned GET,
// which runs the same operation without sending it and is authorized, when
// used, by the signer's credentials, so the signer's policy is what it
// needs.
func getObject(z authorizer, params any) ([]grant, error) {
	in, ok := params.(*s3.GetObjectInput)
	if !ok {
		return nil, fmt.Errorf("params are a %T", params)
	}
	if deref(in.Bucket) == "" || deref(in.Key) == "" {
		return nil, fmt.Errorf("no bucket or key")
	}
	return []grant{{"s3:GetObject", z.arns.Object(deref(in.Bucket), deref(in.Key))}}, nil
}
