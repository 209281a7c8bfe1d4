using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Json;

namespace MuxWatch.Service.Api;

/// <summary>The sidecar's own answers, serialized like MuxWatch's (same options, source-generated).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(PostAnswer))]
[JsonSerializable(typeof(LineErrorAnswer))]
[JsonSerializable(typeof(LineSummaryAnswer))]
[JsonSerializable(typeof(ProblemAnswer))]
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

/// <summary>
/// A refusal, as RFC 9457 problem details (<c>application/problem+json</c>), with the reason also under
/// <c>error</c>, the member earlier answers used.
/// </summary>
/// <param name="Type">A URI naming the problem type (here the status's RFC section).</param>
/// <param name="Title">The status's name.</param>
/// <param name="Status">The HTTP status.</param>
/// <param name="Detail">Why, in words.</param>
/// <param name="Error">The same reason.</param>
internal sealed record ProblemAnswer(string Type, string Title, int Status, string Detail, string Error)
{
    public const string ContentType = "application/problem+json";

    public static ProblemAnswer For(int status, string reason) =>
        new("https://www.rfc-editor.org/rfc/rfc9110#status." + status.ToString(System.Globalization.CultureInfo.InvariantCulture),
            Microsoft.AspNetCore.WebUtilities.ReasonPhrases.GetReasonPhrase(status), status, reason, reason);
}
