using System.Text.Encodings.Web;
using System.Text.Json;
using System.Text.Json.Serialization.Metadata;

namespace MuxWatch.Json;

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
        foreach (var converter in MuxWatchJsonContext.Default.Options.Converters)
        {
            options.Converters.Add(converter); // the hosts' contexts write MuxWatch's enums the same way
        }

        options.MakeReadOnly();
        return options;
    }

    /// <summary>The contract of <typeparamref name="T"/> under <see cref="Options"/>.</summary>
    public static JsonTypeInfo<T> TypeInfo<T>() => (JsonTypeInfo<T>)Options.GetTypeInfo(typeof(T));

    /// <summary><paramref name="value"/> as one line of JSON.</summary>
    public static string Serialize<T>(T value) => JsonSerializer.Serialize(value, TypeInfo<T>());
}
