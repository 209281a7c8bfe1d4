using System.Text.Json;
using System.Text.Json.Serialization;

namespace MuxWatch.Json;

/// <summary>
/// Writes an enum as its kebab-case name (<c>ThreadPoolStarvation</c> as <c>thread-pool-starvation</c>),
/// the vocabulary MuxWatch uses in JSON, metric labels and docs alike (<see cref="Model.KebabCaseNames{TEnum}"/>
/// uses the same policy). Registered in <see cref="MuxWatchJsonContext"/> and <see cref="MuxWatchJson.Create"/>, not on the enums.
/// </summary>
/// <typeparam name="TEnum">The enum.</typeparam>
internal sealed class KebabCaseEnumConverter<TEnum>() : JsonStringEnumConverter<TEnum>(JsonNamingPolicy.KebabCaseLower, allowIntegerValues: false)
    where TEnum : struct, Enum;
