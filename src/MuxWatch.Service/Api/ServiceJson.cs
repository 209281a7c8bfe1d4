using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Json;

namespace MuxWatch.Service.Api;

/// <summary>The sidecar's own answers, serialized like MuxWatch's (same options, source-generated).</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web)]
[JsonSerializable(typeof(PostAnswer))]
[JsonSerializable(typeof(LineErrorAnswer))]
internal sealed partial class ServiceJsonContext : JsonSerializerContext;

/// <summary>Options for every answer the sidecar writes: MuxWatch's and its own.</summary>
internal static class ServiceJson
{
    public static JsonSerializerOptions Options { get; } = MuxWatchJson.Create(ServiceJsonContext.Default);
}

/// <summary>The answer of <c>POST /api/timeouts</c>.</summary>
/// <param name="Accepted">Messages read and recorded.</param>
/// <param name="Rejected">Lines that could not be used.</param>
/// <param name="Results">One per message, in order: a <see cref="TimeoutAnswer"/> or a <see cref="LineErrorAnswer"/>.</param>
internal sealed record PostAnswer(int Accepted, int Rejected, IReadOnlyList<object> Results);

/// <summary>A line of a POST that could not be used; the others are still recorded.</summary>
/// <param name="Line">Its number, from 1.</param>
/// <param name="Error">Why.</param>
internal sealed record LineErrorAnswer(int Line, string Error);
