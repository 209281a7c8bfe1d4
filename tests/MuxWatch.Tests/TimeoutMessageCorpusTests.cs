using System.Text.Json;

namespace MuxWatch.Tests;

/// <summary>
/// Every message of <c>Corpus/timeout-messages.json</c> (written from the client's source, its docs and
/// public reports, across 1.x, 2.x, 2.6+ and 3.x) is read and diagnosed as the corpus says.
/// </summary>
public sealed class TimeoutMessageCorpusTests
{
    private static readonly Lazy<Dictionary<string, JsonElement>> Cases = new(() =>
    {
        var path = Path.Combine(AppContext.BaseDirectory, "Corpus", "timeout-messages.json");
        using var document = JsonDocument.Parse(File.ReadAllText(path));
        return document.RootElement.EnumerateArray().ToDictionary(c => c.GetProperty("name").GetString()!, c => c.Clone());
    });

    public static TheoryData<string> CaseNames() => new(Cases.Value.Keys);

    [Theory]
    [MemberData(nameof(CaseNames))]
    public void Corpus_message_is_read_and_diagnosed_as_expected(string name)
    {
        var expected = Cases.Value[name];
        var report = TimeoutMessageReader.Read(expected.GetProperty("message").GetString());
        var diagnosis = TimeoutDiagnoser.Diagnose(report);

        Assert.Equal(expected.GetProperty("kind").GetString(), report.Kind.ToName());
        AssertOptional(expected, "command", report.Command);
        AssertOptional(expected, "key", report.Key);
        AssertOptional(expected, "endpoint", report.Endpoint);
        AssertOptional(expected, "exceptionType", report.ExceptionType);
        AssertOptional(expected, "failureType", report.FailureType);
        if (expected.TryGetProperty("timeoutMs", out var timeout))
        {
            Assert.Equal(timeout.GetDouble(), report.TimeoutMilliseconds);
        }

        if (expected.TryGetProperty("elapsedMs", out var elapsed))
        {
            Assert.Equal(elapsed.GetDouble(), report.ElapsedMilliseconds);
        }

        if (expected.TryGetProperty("threadTheft", out var theft))
        {
            Assert.Equal(theft.GetBoolean(), report.ThreadTheftIndicated);
        }

        if (expected.TryGetProperty("fields", out var fields))
        {
            foreach (var field in fields.EnumerateObject())
            {
                var value = report.Field(field.Name);
                Assert.True(value is not null, $"field '{field.Name}' was not read");
                switch (field.Value.ValueKind)
                {
                    case JsonValueKind.Number:
                        Assert.Equal(field.Value.GetDouble(), value.Number);
                        break;
                    case JsonValueKind.True or JsonValueKind.False:
                        Assert.Equal(field.Value.GetBoolean(), value.Flag);
                        break;
                    default:
                        Assert.Equal(field.Value.GetString(), value.Raw);
                        break;
                }
            }
        }

        if (expected.TryGetProperty("tuples", out var tuples))
        {
            foreach (var tuple in tuples.EnumerateObject())
            {
                foreach (var part in tuple.Value.EnumerateObject())
                {
                    Assert.Equal(part.Value.GetDouble(), report.Field(tuple.Name)?.Part(part.Name));
                }
            }
        }

        Assert.Equal(expected.GetProperty("cause").GetString(), diagnosis.Cause.ToName());
        Assert.Equal(
            expected.GetProperty("causes").EnumerateArray().Select(c => c.GetString()),
            diagnosis.Causes.Select(c => c.ToName()));
        if (expected.TryGetProperty("evidence", out var evidence))
        {
            foreach (var fragment in evidence.EnumerateArray())
            {
                Assert.Contains(diagnosis.EvidenceLines, line => line.Contains(fragment.GetString()!, StringComparison.Ordinal));
            }
        }
    }

    private static void AssertOptional(JsonElement expected, string name, string? actual)
    {
        if (expected.TryGetProperty(name, out var value))
        {
            Assert.Equal(value.GetString(), actual);
        }
    }
}
