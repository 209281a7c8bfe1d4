using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>System.Text.Json source-generated serialization of MuxWatch's answers: camelCase, enums in kebab-case, no reflection.</summary>
/// <remarks>
/// The converters are registered here and in <see cref="MuxWatchJson.Create"/>, not on the domain types:
/// the model knows nothing of JSON. Enums are written as their kebab-case names, a field value as the JSON
/// type its text reads as.
/// </remarks>
[JsonSourceGenerationOptions(JsonSerializerDefaults.Web, WriteIndented = false, Converters = [
    typeof(KebabCaseEnumConverter<TimeoutCause>),
    typeof(KebabCaseEnumConverter<DiagnosisConfidence>),
    typeof(KebabCaseEnumConverter<RedisErrorKind>),
    typeof(KebabCaseEnumConverter<ServerEventKind>),
    typeof(KebabCaseEnumConverter<FleetVerdict>),
    typeof(FieldValueJsonConverter)])]
[JsonSerializable(typeof(TargetsAnswer))]
[JsonSerializable(typeof(DiagnosisAnswer))]
[JsonSerializable(typeof(TimeoutAnswer))]
[JsonSerializable(typeof(TimeoutsAnswer))]
[JsonSerializable(typeof(StatusAnswer))]
[JsonSerializable(typeof(ErrorAnswer))]
[JsonSerializable(typeof(ProblemAnswer))]
[JsonSerializable(typeof(IReadOnlyDictionary<string, long>))]
[JsonSerializable(typeof(EventsAnswer))]
[JsonSerializable(typeof(DoctorReport))]
[JsonSerializable(typeof(IncidentsAnswer))]
[JsonSerializable(typeof(IncidentAnswer))]
[JsonSerializable(typeof(PrometheusQueryReply))]
internal sealed partial class MuxWatchJsonContext : JsonSerializerContext;
