using System.Text.Json;

namespace MuxWatch.Json;

/// <summary>
/// A Prometheus HTTP API reply to an instant query (<c>GET /api/v1/query</c>), as documented at
/// https://prometheus.io/docs/prometheus/latest/querying/api/: read by the fleet witness, never written.
/// </summary>
/// <param name="Status"><c>success</c> or <c>error</c>.</param>
/// <param name="Data">The result, on success.</param>
/// <param name="Error">What went wrong, on error.</param>
internal sealed record PrometheusQueryReply(string? Status, PrometheusQueryData? Data, string? Error);

/// <summary>The <c>data</c> of a reply.</summary>
/// <param name="ResultType"><c>vector</c> for the queries the fleet witness sends.</param>
/// <param name="Result">One element per series.</param>
internal sealed record PrometheusQueryData(string? ResultType, IReadOnlyList<PrometheusSample>? Result);

/// <summary>One series of an instant vector: its labels and <c>[unix seconds, "value"]</c>.</summary>
/// <param name="Metric">The series' labels.</param>
/// <param name="Value">The sample: a time (a number) and the value (a string, as Prometheus writes it).</param>
internal sealed record PrometheusSample(IReadOnlyDictionary<string, string>? Metric, IReadOnlyList<JsonElement>? Value);
