using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Json;

namespace MuxWatch.Service.Api;

/// <summary>The sidecar's own answers, serialized like MuxWatch's (same options, source-generated).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(PostAnswer))]
[JsonSerializable(typeof(LineErrorAnswer))]
[JsonSerializable(typeof(LineSummaryAnswer))]
internal sealed partial class ServiceJsonContext : JsonSerializerContext;

/// <summary>Options for every answer the sidecar writes: MuxWatch's and its own.</summary>
internal static class ServiceJson
{
    public static JsonSerializerOptions Options { get; } = MuxWatchJson.Create(ServiceJsonContext.Default);
}

/// <summary>The answer of <c>POST /api/timeouts</c>.</summary>
/// <param name="Accepted">Messages read and recorded.</param>
/// <param name="Rejected">Lines that could not be used.</param>
/// <param name="Results">One per message, in order: a <see cref="LineSummaryAnswer"/> (a <see cref="TimeoutAnswer"/> for a text body, or with <c>?details=true</c>) or a <see cref="LineErrorAnswer"/>.</param>
internal sealed record PostAnswer(int Accepted, int Rejected, IReadOnlyList<object> Results);

/// <summary>A line of a POST that could not be used; the others are still recorded.</summary>
/// <param name="Line">Its number, from 1.</param>
/// <param name="Error">Why.</param>
internal sealed record LineErrorAnswer(int Line, string Error);

/// <summary>One accepted line of a POST, in brief: the full entry is in <c>GET /api/timeouts</c> under its id.</summary>
/// <param name="Line">Its number, from 1.</param>
/// <param name="Id">The recorded timeout's id.</param>
/// <param name="Kind">Which message it was.</param>
/// <param name="Cause">Its primary cause.</param>
/// <param name="Settled">False while the diagnosis waits for its endpoint's next server poll.</param>
internal sealed record LineSummaryAnswer(int Line, long Id, MuxWatch.Timeouts.RedisErrorKind Kind, MuxWatch.Timeouts.TimeoutCause Cause, bool Settled)
{
    public static LineSummaryAnswer From(int line, MuxWatch.Timeouts.ObservedTimeout observed) =>
        new(line, observed.Id, observed.Report.Kind, observed.Diagnosis.Cause, observed.Settled);
}
