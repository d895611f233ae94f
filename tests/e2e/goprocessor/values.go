package main

import "google.golang.org/protobuf/types/known/structpb"

func numberValue(f float64) *structpb.Value { return structpb.NewNumberValue(f) }

func listValue(items []any) *structpb.Value {
	v, err := structpb.NewList(items)
	if err != nil {
		return structpb.NewNullValue()
	}
	return structpb.NewListValue(v)
}
