using System.Text.Json;
using System.Text.Json.Serialization;
using MuxWatch.Model;

namespace MuxWatch.Json;

/// <summary>
/// Writes a <see cref="FieldValue"/> with the JSON type its text has: a number, a boolean, an object
/// for a tuple such as <c>WORKER</c> (<c>{"Busy": 6, ...}</c>), else the text as written.
/// </summary>
/// <remarks>
/// Written by hand because the JSON type depends on what the message said, which no attribute or
/// generated contract can express. Write-only: MuxWatch never reads its answers back.
/// </remarks>
internal sealed class FieldValueJsonConverter : JsonConverter<FieldValue>
{
    /// <inheritdoc />
    public override FieldValue Read(ref Utf8JsonReader reader, Type typeToConvert, JsonSerializerOptions options) =>
        throw new NotSupportedException("Field values are written, never read.");

    /// <inheritdoc />
    public override void Write(Utf8JsonWriter writer, FieldValue value, JsonSerializerOptions options)
    {
        ArgumentNullException.ThrowIfNull(writer);
        ArgumentNullException.ThrowIfNull(value);
        if (value.Parts is { } parts)
        {
            writer.WriteStartObject();
            foreach (var (name, part) in parts)
            {
                writer.WritePropertyName(name);
                Write(writer, part, options);
            }

            writer.WriteEndObject();
        }
        else if (value.Number is { } number)
        {
            writer.WriteNumberValue(number);
        }
        else if (value.Flag is { } flag)
        {
            writer.WriteBooleanValue(flag);
        }
        else
        {
            writer.WriteStringValue(value.Raw);
        }
    }
}
