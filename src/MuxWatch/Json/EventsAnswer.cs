namespace MuxWatch.Json;

/// <summary>The answer of <c>/events</c>: the timeline of each polled endpoint.</summary>
/// <param name="Endpoints">One entry per endpoint (only the one asked for, when the query names one).</param>
public sealed record EventsAnswer(IReadOnlyList<EndpointEvents> Endpoints);
