using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization;
using System.Text.Json.Serialization.Metadata;
using MuxWatch.Hosting;
using MuxWatch.Probing;
using MuxWatch.Server;

namespace MuxWatch.Json;

/// <summary>System.Text.Json source-generated serialization of MuxWatch's answers: camelCase, enums in kebab-case, no reflection.</summary>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web, WriteIndented = false)]
[JsonSerializable(typeof(TargetsAnswer))]
[JsonSerializable(typeof(DiagnosisAnswer))]
[JsonSerializable(typeof(TimeoutAnswer))]
[JsonSerializable(typeof(TimeoutsAnswer))]
[JsonSerializable(typeof(StatusAnswer))]
[JsonSerializable(typeof(ErrorAnswer))]
[JsonSerializable(typeof(ProblemAnswer))]
[JsonSerializable(typeof(IReadOnlyDictionary<string, long>))]
[JsonSerializable(typeof(EventsAnswer))]
public sealed partial class MuxWatchJsonContext : JsonSerializerContext;

/// <summary>The serializer options of every MuxWatch answer, and of hosts that add answers of their own.</summary>
public static class MuxWatchJson
{
    /// <summary>MuxWatch's answers: web defaults, characters such as '&gt;' kept readable (the output is read by people and tools, never embedded in HTML).</summary>
    public static JsonSerializerOptions Options { get; } = Create();

    /// <summary>Options that also serialize the types of <paramref name="more"/> (a host's own source-generated context).</summary>
    public static JsonSerializerOptions Create(params IJsonTypeInfoResolver[] more)
    {
        var options = new JsonSerializerOptions(JsonSerializerDefaults.Web)
        {
            Encoder = JavaScriptEncoder.UnsafeRelaxedJsonEscaping,
            TypeInfoResolver = JsonTypeInfoResolver.Combine([MuxWatchJsonContext.Default, .. more]),
        };
        options.MakeReadOnly();
        return options;
    }

    /// <summary>The contract of <typeparamref name="T"/> under <see cref="Options"/>.</summary>
    public static JsonTypeInfo<T> TypeInfo<T>() => (JsonTypeInfo<T>)Options.GetTypeInfo(typeof(T));

    /// <summary><paramref name="value"/> as one line of JSON.</summary>
    public static string Serialize<T>(T value) => JsonSerializer.Serialize(value, TypeInfo<T>());
}

/// <summary>The answer of <c>/targets</c>: every watched multiplexer.</summary>
/// <param name="Targets">One entry per watched multiplexer, in registration order.</param>
public sealed record TargetsAnswer(IReadOnlyList<TargetStatus> Targets);

/// <summary>The answer of <c>/events</c>: the timeline of each polled endpoint.</summary>
/// <param name="Endpoints">One entry per endpoint (only the one asked for, when the query names one).</param>
public sealed record EventsAnswer(IReadOnlyList<EndpointEvents> Endpoints);

/// <summary>One endpoint's timeline.</summary>
/// <param name="Endpoint"><c>host:port</c>.</param>
/// <param name="CompleteThrough">Every event that started before this time is listed (the start of the latest complete poll).</param>
/// <param name="Polling">How its polling goes.</param>
/// <param name="Events">Its events by start time (client clock), the newest last.</param>
public sealed record EndpointEvents(string Endpoint, DateTimeOffset? CompleteThrough, ServerPollingStatus Polling, IReadOnlyList<ServerEvent> Events);
