-- The words each character-memory request recalls with (macro expand_recall_words).
{{ expand_recall_words(ref('int_recall_requests'), ref('recall_stopwords'),
    ref('association_words')) }}
