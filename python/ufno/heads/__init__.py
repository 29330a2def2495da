"""The KPI heads: small estimators stored in a model file beside the network (common holds
what they share)."""
